#include "util/compressed_file.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "util/error.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

namespace sextant {
namespace {

// A growable buffer that always keeps kInputPadding zero bytes of slack at the end and never
// holds more than `limit` + 1 bytes: reaching that size means the limit was passed.
class PaddedBuffer {
 public:
  PaddedBuffer(size_t hint, size_t limit) : limit_(limit) {
    Reserve(std::min(std::max<size_t>(hint, 4096), limit_ + 1));
  }
  char* end() { return data_.get() + size_; }
  size_t room() const { return capacity_ - size_; }
  void Grow(size_t n) { size_ += n; }
  void EnsureRoom(size_t min_room) {
    if (room() < min_room && capacity_ <= limit_) {
      Reserve(std::min(std::max(capacity_ + capacity_ / 2, size_ + min_room), limit_ + 1));
    }
  }
  size_t size() const { return size_; }
  std::unique_ptr<char[]> Release() {
    std::memset(data_.get() + size_, 0, InputText::kInputPadding);
    return std::move(data_);
  }

 private:
  void Reserve(size_t capacity) {
    // Left uninitialised: pages never written are never made resident.
    std::unique_ptr<char[]> bigger(new char[capacity + InputText::kInputPadding]);
    if (size_) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
  size_t size_ = 0;
  size_t limit_;
};

// The most text `compressed_size` bytes may decode to under `limits` (at least 1 MiB, so small
// files of repetitive text are not refused).
size_t OutputCap(size_t compressed_size, const InputLimits& limits) {
  const int64_t by_ratio =
      std::max<int64_t>(int64_t{1} << 20, static_cast<int64_t>(compressed_size) * limits.max_ratio);
  return static_cast<size_t>(std::min(limits.max_bytes, by_ratio));
}

// Decodes a compressed text in pieces, into whatever room the caller gives. One decoder
// serves both whole-file loading and the piece-by-piece TextReader, so the two refuse and
// truncate alike: corrupt data is an error when nothing was decoded yet and otherwise where
// the text ends; more than `cap` bytes of text is an error.
class Decoder {
 public:
  Decoder(const std::string& path, const char* format, std::string_view in, size_t cap)
      : in_(in), path_(path), format_(format), cap_(cap) {}
  virtual ~Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Writes up to `room` bytes of text at `dst`; returns how many (fewer only at the end).
  size_t Decode(char* dst, size_t room) {
    size_t produced = 0;
    while (produced < room && !done_) {
      const size_t n = Step(dst + produced, room - produced);
      produced += n;
      total_ += n;
      if (total_ > cap_) {
        ThrowUserError(SourceLocation{path_}, "",
                       fmt::format("{} data expands beyond {} bytes; refusing", format_, cap_));
      }
    }
    return produced;
  }
  bool done() const { return done_; }
  size_t consumed() const { return consumed_; }
  size_t total() const { return total_; }
  bool truncated() const { return truncated_; }
  const std::string& reason() const { return reason_; }

 protected:
  // One call of the library's decoder: text written at `dst` (at most `room` bytes).
  virtual size_t Step(char* dst, size_t room) = 0;
  void Finish() { done_ = true; }
  void Stop(std::string why) {
    truncated_ = true;
    reason_ = std::move(why);
    done_ = true;
  }
  // `produced` is the text the failing step decoded before it failed.
  void Corrupt(size_t offset, const std::string& msg, size_t produced) {
    if (total_ + produced == 0) {
      ThrowUserError(SourceLocation{path_, -1, -1, static_cast<int64_t>(offset)}, "",
                     fmt::format("invalid {} data: {}", format_, msg));
    }
    Stop(fmt::format("{} data corrupt at compressed byte {}: {}", format_, offset, msg));
  }
  std::string_view in_;
  size_t consumed_ = 0;  // compressed bytes used

 private:
  std::string path_;
  const char* format_;  // "gzip", "zstd"
  size_t cap_;
  size_t total_ = 0;
  bool done_ = false;
  bool truncated_ = false;
  std::string reason_;
};

class GzipDecoder final : public Decoder {
 public:
  GzipDecoder(const std::string& path, std::string_view in, size_t cap)
      : Decoder(path, "gzip", in, cap) {
    // 15 + 32: a zlib window of 2^15 and automatic gzip/zlib header detection.
    if (inflateInit2(&zs_, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
  }
  ~GzipDecoder() override { inflateEnd(&zs_); }

 private:
  size_t Step(char* dst, size_t room) override {
    const size_t remaining = in_.size() - consumed_;
    const uInt chunk_in = static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
    const uInt chunk_out = static_cast<uInt>(std::min<size_t>(room, 1u << 30));
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data() + consumed_));
    zs_.avail_in = chunk_in;
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = chunk_out;
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    const size_t produced = chunk_out - zs_.avail_out;
    consumed_ += chunk_in - zs_.avail_in;
    const size_t left = in_.size() - consumed_;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are one stream (gzip -c a b > c).
      if (left < 2 || static_cast<unsigned char>(in_[consumed_]) != 0x1f) {
        Finish();
      } else {
        inflateReset(&zs_);
      }
    } else if (rc == Z_BUF_ERROR && left == 0) {
      Stop("gzip stream ends early (file truncated)");
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      Corrupt(consumed_, zs_.msg ? zs_.msg : "corrupt data", produced);
    }
    return produced;
  }
  z_stream zs_{};
};

class ZstdDecoder final : public Decoder {
 public:
  ZstdDecoder(const std::string& path, std::string_view in, size_t cap)
      : Decoder(path, "zstd", in, cap), ds_(ZSTD_createDStream(), ZSTD_freeDStream) {
    ZSTD_initDStream(ds_.get());
  }

 private:
  size_t Step(char* dst, size_t room) override {
    ZSTD_inBuffer input{in_.data(), in_.size(), consumed_};
    ZSTD_outBuffer output{dst, room, 0};
    const size_t last = ZSTD_decompressStream(ds_.get(), &output, &input);
    consumed_ = input.pos;
    if (ZSTD_isError(last)) {
      Corrupt(input.pos, ZSTD_getErrorName(last), output.pos);
    } else if (input.pos == input.size && (last == 0 || output.pos < output.size)) {
      // The input is used up and the decoder holds no more output.
      if (last != 0) {
        Stop("zstd stream ends early (file truncated)");
      } else {
        Finish();
      }
    }
    return output.pos;
  }
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds_;
};

std::unique_ptr<Decoder> MakeDecoder(Compression compression, const std::string& path,
                                     std::string_view in, size_t cap) {
  if (compression == Compression::kGzip) return std::make_unique<GzipDecoder>(path, in, cap);
  return std::make_unique<ZstdDecoder>(path, in, cap);
}

// A first guess at the size of the text, trusted no further than the cap.
size_t DecodedSizeHint(Compression compression, std::string_view in) {
  if (compression == Compression::kGzip) {
    // The gzip trailer holds the uncompressed size mod 2^32 (RFC 1952 ISIZE).
    if (in.size() >= 18) {
      uint32_t isize;
      std::memcpy(&isize, in.data() + in.size() - 4, 4);
      if (isize >= in.size()) return size_t{isize} + 1;
    }
    return in.size() * 4;
  }
  // A zstd frame header's content size is not used even as a hint: 17 bytes can claim 1 TiB.
  return in.size() * 5;
}

}  // namespace

Compression DetectCompression(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return Compression::kGzip;
  if (head.starts_with("\x28\xb5\x2f\xfd")) return Compression::kZstd;
  return Compression::kNone;
}

std::string MisnamedCompression(std::string_view path, std::string_view head) {
  std::string lower(path.size() > 4 ? path.substr(path.size() - 4) : path);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Named {
    std::string_view extension, format, magic;
  };
  static constexpr Named kNamed[] = {{".gz", "gzip", "1f 8b"}, {".zst", "zstd", "28 b5 2f fd"}};
  for (const Named& n : kNamed) {
    // A file in another format that is read (gzip named .zst) is read all the same.
    if (!lower.ends_with(n.extension) || DetectCompression(head) != Compression::kNone) continue;
    std::string hex, shown;
    for (size_t i = 0; i < head.size() && i < 8; ++i) {
      const auto byte = static_cast<unsigned char>(head[i]);
      hex += fmt::format("{}{:02x}", i ? " " : "", byte);
      shown += byte >= 0x20 && byte < 0x7f ? static_cast<char>(byte) : '.';
    }
    if (head.empty()) return fmt::format("named {}, but empty: not {}", n.extension, n.format);
    return fmt::format("named {}, but not {}: it starts with {} (\"{}\"), not {}'s {}", n.extension,
                       n.format, hex, shown, n.format, n.magic);
  }
  return "";
}

std::string MisnamedCompression(std::string_view path, const InputText& input) {
  return input.compression() == Compression::kNone ? MisnamedCompression(path, input.text()) : "";
}

std::string_view UnreadCompressionName(std::string_view head) {
  // Magic bytes: bzip2 "BZh", xz FD 37 7A 58 5A 00, zip local header 50 4B 03 04, 7-Zip
  // 37 7A BC AF 27 1C, lz4 frame 04 22 4D 18 (each format's specification).
  static constexpr std::pair<std::string_view, std::string_view> kFormats[] = {
      {"BZh", "bzip2"},
      {std::string_view("\xFD"
                        "7zXZ\x00",
                        6),
       "xz"},
      {"PK\x03\x04", "zip"},
      {"7z\xBC\xAF\x27\x1C", "7-Zip"},
      {"\x04\x22\x4D\x18", "lz4"}};
  for (const auto& [magic, name] : kFormats) {
    if (head.starts_with(magic)) return name;
  }
  return "";
}

InputText::InputText(InputText&&) noexcept = default;
InputText& InputText::operator=(InputText&&) noexcept = default;
InputText::~InputText() = default;

InputText InputText::Load(const std::string& path, const InputLimits& limits) {
  auto mapped = std::make_unique<MappedFile>(path, kInputPadding);
  InputText result;
  result.compressed_size_ = mapped->size();
  std::string_view raw(mapped->data(), mapped->size());
  result.compression_ = DetectCompression(raw);
  if (result.compression_ == Compression::kNone) {
    if (static_cast<int64_t>(raw.size()) > limits.max_bytes) {
      ThrowUserError(SourceLocation{path}, "",
                     fmt::format("file is larger than the {}-byte limit", limits.max_bytes));
    }
    mapped->AdviseSequential();
    result.data_ = mapped->writable_data();
    result.size_ = mapped->size();
    result.mapped_ = std::move(mapped);
    return result;
  }
  mapped->AdviseSequential();
  const size_t cap = OutputCap(raw.size(), limits);
  std::unique_ptr<Decoder> decoder = MakeDecoder(result.compression_, path, raw, cap);
  PaddedBuffer out(DecodedSizeHint(result.compression_, raw), cap);
  while (!decoder->done()) {
    out.EnsureRoom(1 << 16);
    // The buffer never holds more than cap + 1 bytes, and the decoder refuses the text
    // before that: room is never 0 here.
    out.Grow(decoder->Decode(out.end(), out.room()));
  }
  result.size_ = out.size();
  result.owned_ = out.Release();
  result.data_ = result.owned_.get();
  result.truncated_ = decoder->truncated();
  result.truncation_reason_ = decoder->reason();
  return result;
}

void InputText::ReleaseBefore(size_t offset) const {
  if (mapped_) mapped_->ReleaseBefore(offset);
}

namespace {

// A plain file, copied out with pread: for one pass over the text this costs less CPU than
// faulting in and walking a mapping page by page (0.25 s against 0.65 s for 1.1 GB).
class PlainReader final : public TextReader {
 public:
  PlainReader(const MappedFile* file, const char* data, size_t size, bool truncated,
              std::string reason)
      : file_(file), data_(data), size_(size), truncated_(truncated), reason_(std::move(reason)) {}
  explicit PlainReader(std::unique_ptr<MappedFile> owned)
      : PlainReader(owned.get(), owned->data(), owned->size(), false, "") {
    owned_ = std::move(owned);
  }
  size_t Read(char* dst, size_t room) override {
    const size_t n = std::min(room, size_ - offset_);
    if (n == 0) return 0;
    if (!file_) {
      std::memcpy(dst, data_ + offset_, n);
    } else if (!file_->ReadAt(offset_, n, dst)) {
      // Shorter than when it was opened: the text ends here.
      truncated_ = true;
      reason_ = "the file became shorter while it was being read (changed by another process?)";
      size_ = offset_;
      return 0;
    }
    offset_ += n;
    return n;
  }
  double fraction_read() const override {
    return size_ == 0 ? 1.0 : static_cast<double>(offset_) / static_cast<double>(size_);
  }
  bool truncated() const override { return truncated_; }
  const std::string& truncation_reason() const override { return reason_; }

 private:
  std::unique_ptr<MappedFile> owned_;
  const MappedFile* file_;  // null: copy from data_
  const char* data_;
  size_t size_;
  size_t offset_ = 0;
  bool truncated_;
  std::string reason_;
};

// A compressed file, decoded into each piece asked for. The compressed bytes are mapped and
// released behind the decoder, so they do not stay resident either.
class DecodingReader final : public TextReader {
 public:
  DecodingReader(std::unique_ptr<MappedFile> file, std::unique_ptr<Decoder> decoder)
      : file_(std::move(file)), decoder_(std::move(decoder)) {}
  size_t Read(char* dst, size_t room) override {
    const size_t n = decoder_->Decode(dst, room);
    if (decoder_->consumed() >= released_ + kReleaseStep) {
      released_ = decoder_->consumed();
      file_->ReleaseBefore(released_);
    }
    return n;
  }
  double fraction_read() const override {
    return file_->size() == 0
               ? 1.0
               : static_cast<double>(decoder_->consumed()) / static_cast<double>(file_->size());
  }
  bool truncated() const override { return decoder_->truncated(); }
  const std::string& truncation_reason() const override { return decoder_->reason(); }

 private:
  static constexpr size_t kReleaseStep = size_t{8} << 20;
  std::unique_ptr<MappedFile> file_;
  std::unique_ptr<Decoder> decoder_;
  size_t released_ = 0;
};

}  // namespace

std::unique_ptr<TextReader> TextReader::Open(const std::string& path, const InputLimits& limits) {
  auto mapped = std::make_unique<MappedFile>(path, InputText::kInputPadding);
  std::string_view raw(mapped->data(), mapped->size());
  const Compression compression = DetectCompression(raw);
  if (compression == Compression::kNone) {
    if (static_cast<int64_t>(raw.size()) > limits.max_bytes) {
      ThrowUserError(SourceLocation{path}, "",
                     fmt::format("file is larger than the {}-byte limit", limits.max_bytes));
    }
    return std::make_unique<PlainReader>(std::move(mapped));
  }
  mapped->AdviseSequential();
  std::unique_ptr<Decoder> decoder =
      MakeDecoder(compression, path, raw, OutputCap(raw.size(), limits));
  return std::make_unique<DecodingReader>(std::move(mapped), std::move(decoder));
}

std::unique_ptr<TextReader> TextReader::Over(const InputText& input) {
  return std::make_unique<PlainReader>(input.mapped_.get(), input.data_, input.size_,
                                       input.truncated_, input.truncation_reason_);
}

InputText InputText::FromString(std::string_view text) {
  InputText result;
  result.owned_ = std::make_unique<char[]>(text.size() + kInputPadding);
  if (!text.empty()) std::memcpy(result.owned_.get(), text.data(), text.size());
  std::memset(result.owned_.get() + text.size(), 0, kInputPadding);
  result.data_ = result.owned_.get();
  result.size_ = text.size();
  result.compressed_size_ = text.size();
  return result;
}

struct OutputFile::State {
  explicit State(const std::string& path, const std::vector<std::string>& inputs)
      : file(path, inputs) {}
  // Feeds `bytes` to the encoder and writes what it gives back; `finish` ends the stream.
  void Encode(std::string_view bytes, bool finish) {
    if (compression == Compression::kNone) return file.Write(bytes);
    if (compression == Compression::kGzip) {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
      zs.avail_in = static_cast<uInt>(bytes.size());
      for (int rc = Z_OK; zs.avail_in > 0 || (finish && rc == Z_OK);) {
        zs.next_out = reinterpret_cast<Bytef*>(buffer.data());
        zs.avail_out = static_cast<uInt>(buffer.size());
        rc = deflate(&zs, finish ? Z_FINISH : Z_NO_FLUSH);
        file.Write({buffer.data(), buffer.size() - zs.avail_out});
      }
      return;
    }
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    for (size_t left = 1; !ZSTD_isError(left) && (in.pos < in.size || (finish && left > 0));) {
      ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
      left = ZSTD_compressStream2(zstd, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
      file.Write({buffer.data(), out.pos});
    }
  }
  AtomicFile file;
  Compression compression = Compression::kNone;
  z_stream zs{};
  ZSTD_CStream* zstd = nullptr;
  std::string buffer;
  bool closed = false;
};

std::string GzipBytes(std::string_view bytes, int level) {
  z_stream zs{};
  // windowBits 15 + 16 selects a gzip header.
  deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, static_cast<uLong>(bytes.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);  // deflateBound leaves room for all of it in one call
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs)
    : state_(std::make_unique<State>(path, inputs)) {
  if (path.ends_with(".gz")) {
    state_->compression = Compression::kGzip;
    // windowBits 15 + 16 selects a gzip header; level 4 trades a little size for speed.
    deflateInit2(&state_->zs, 4, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  } else if (path.ends_with(".zst")) {
    state_->compression = Compression::kZstd;
    state_->zstd = ZSTD_createCStream();
    ZSTD_initCStream(state_->zstd, 3);
  }
  state_->buffer.resize(1 << 18);
}

void OutputFile::Write(std::string_view bytes) { state_->Encode(bytes, false); }

void OutputFile::Close() {
  if (state_->closed) return;
  state_->closed = true;
  state_->Encode({}, true);
  state_->file.Commit();
}

OutputFile::~OutputFile() {
  // The encoders' memory; an uncommitted file is removed by ~AtomicFile.
  if (state_->compression == Compression::kGzip) deflateEnd(&state_->zs);
  if (state_->zstd) ZSTD_freeCStream(state_->zstd);
}

}  // namespace sextant
