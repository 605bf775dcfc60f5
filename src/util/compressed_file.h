// Whole-file input that may be gzip- or zstd-compressed (detected by magic bytes, not by
// the file name), and an output stream that compresses when the name ends in .gz / .zst.
// The only place that decompresses: every reader of user files goes through InputText.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

class MappedFile;

enum class Compression { kNone, kGzip, kZstd };

// Magic bytes: 1f 8b = gzip (RFC 1952), 28 b5 2f fd = zstd frame (RFC 8878).
Compression DetectCompression(std::string_view head);
// The name of a compression format that is not read ("bzip2", "xz", "zip", "7-Zip", "lz4")
// when `head` starts with its magic bytes, else "".
std::string_view UnreadCompressionName(std::string_view head);

// When `path` is named for a compression (.gz, .zst, any case) but `head`, the file's first
// bytes, is in no compressed format that is read: "named .gz, but not gzip: it starts with
// 68 65 6c 6c 6f ("hello"), not gzip's 1f 8b". "" when the name says no compression or the
// bytes are compressed. Readers add it to the error for a file they cannot read, which
// otherwise describes only the bytes.
std::string MisnamedCompression(std::string_view path, std::string_view head);

// Bounds on the text of one input: a few KiB of gzip or zstd can expand to terabytes.
struct InputLimits {
  int64_t max_bytes = int64_t{32} << 30;  // 32 GiB of text, decompressed or not
  // Decompressed / compressed size. Real traces and snapshots stay below 50 (the corpus's
  // highest is 30); 200 leaves a 4x margin while a bomb of a few MB is stopped after a few
  // hundred MB of output, well inside memory.
  int64_t max_ratio = 200;
};

// The decompressed bytes of a file, followed by >= `kInputPadding` readable zero bytes.
// Plain files are memory-mapped (no copy); compressed files are inflated into memory.
class InputText {
 public:
  static constexpr size_t kInputPadding = 64;
  // Throws UserError if the file cannot be read, is not valid compressed data from the first
  // byte, or its text would exceed `limits` (checked as it grows: a zstd frame's claimed
  // content size is never trusted). A stream cut short yields what was decoded, with
  // truncated() set.
  static InputText Load(const std::string& path, const InputLimits& limits = {});
  // For tests and fuzzing: text already in memory (copied, padded).
  static InputText FromString(std::string_view text);

  InputText(InputText&&) noexcept;
  InputText& operator=(InputText&&) noexcept;
  ~InputText();

  std::string_view text() const { return {data_, size_}; }
  // The same bytes, for edits that the caller undoes before the text is read again (a
  // private mapping or an owned buffer: the file itself never changes).
  char* writable_text() const { return data_; }
  Compression compression() const { return compression_; }
  size_t compressed_size() const { return compressed_size_; }
  bool truncated() const { return truncated_; }
  // Tells the kernel that bytes before `offset` will not be read again, so their pages can
  // leave this process's resident set (memory-mapped files only; they are re-read from disk
  // if touched again). Keeps peak memory near the size of one copy of the text.
  void ReleaseBefore(size_t offset) const;
  // Why decoding stopped early ("" if it did not).
  const std::string& truncation_reason() const { return truncation_reason_; }

 private:
  InputText() = default;
  friend class TextReader;
  std::unique_ptr<MappedFile> mapped_;
  std::unique_ptr<char[]> owned_;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t compressed_size_ = 0;
  Compression compression_ = Compression::kNone;
  bool truncated_ = false;
  std::string truncation_reason_;
};

// MisnamedCompression of a loaded input: "" when it was decompressed (its name did not matter).
std::string MisnamedCompression(std::string_view path, const InputText& input);

// A file's text read front to back in pieces, for a reader that passes over it once: a plain
// file is copied out with pread, a gzip or zstd file is decoded as it is read. Memory then
// holds the piece being read, not the whole text (which InputText::Load inflates into
// memory). Limits, refusals and truncation are InputText::Load's.
class TextReader {
 public:
  // Throws UserError as InputText::Load does; decoding errors may also come from Read.
  static std::unique_ptr<TextReader> Open(const std::string& path, const InputLimits& limits = {});
  // The text of `input`, which must outlive the reader.
  static std::unique_ptr<TextReader> Over(const InputText& input);
  virtual ~TextReader() = default;
  // Copies the next bytes of text to `dst`, `room` of them unless the text ends first.
  virtual size_t Read(char* dst, size_t room) = 0;
  // The part of the input used so far, 0 to 1 (of the compressed bytes for a compressed
  // file): where the reader is, for sizing what is built from the text.
  virtual double fraction_read() const = 0;
  // Set once the end is reached, as InputText's.
  virtual bool truncated() const = 0;
  virtual const std::string& truncation_reason() const = 0;
};

// `bytes` as one gzip member (RFC 1952) at zlib level `level` (1 fastest .. 9 smallest).
std::string GzipBytes(std::string_view bytes, int level);

// Writes a file, gzip-compressed if `path` ends in ".gz", zstd if ".zst", plain otherwise.
// The file appears at `path` only when Close() succeeds (see AtomicFile in util/file_io.h).
class OutputFile {
 public:
  // Throws UserError if the file cannot be created or is one of `inputs`.
  explicit OutputFile(const std::string& path, const std::vector<std::string>& inputs = {});
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void Write(std::string_view bytes);
  // Flushes and puts the file in place; throws UserError on a write failure. Destroyed without
  // Close() (an error was thrown), nothing is written to `path`.
  void Close();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sextant
