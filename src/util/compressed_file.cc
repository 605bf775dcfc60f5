#include "util/compressed_file.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
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
  bool over_limit() const { return size_ > limit_; }
  size_t limit() const { return limit_; }
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

// What a decoder produced: a stream that stops early keeps the text before the problem.
struct Decoded {
  Decoded(size_t hint, size_t cap, const std::string& path, const char* format)
      : out(hint, cap), path(path), format(format) {}
  PaddedBuffer out;
  const std::string& path;
  const char* format;  // "gzip", "zstd"
  bool truncated = false;
  std::string reason;

  void Stop(std::string why) {
    truncated = true;
    reason = std::move(why);
  }
  // Corrupt data is an error when nothing was decoded yet, else where the text ends.
  void Corrupt(size_t offset, const std::string& msg) {
    if (out.size() == 0) {
      ThrowUserError(SourceLocation{path, -1, -1, static_cast<int64_t>(offset)}, "",
                     fmt::format("invalid {} data: {}", format, msg));
    }
    Stop(fmt::format("{} data corrupt at compressed byte {}: {}", format, offset, msg));
  }
  void Grow(size_t n) {
    out.Grow(n);
    if (out.over_limit()) {
      ThrowUserError(SourceLocation{path}, "",
                     fmt::format("{} data expands beyond {} bytes; refusing", format, out.limit()));
    }
  }
};

Decoded InflateGzip(const std::string& path, std::string_view in, size_t cap) {
  // The gzip trailer holds the uncompressed size mod 2^32 (RFC 1952 ISIZE): a good first guess,
  // trusted no further than the cap.
  size_t hint = in.size() * 4;
  if (in.size() >= 18) {
    uint32_t isize;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    if (isize >= in.size()) hint = size_t{isize} + 1;
  }
  Decoded d(hint, cap, path, "gzip");
  struct Inflater {
    z_stream zs{};
    ~Inflater() { inflateEnd(&zs); }
  } z;
  if (inflateInit2(&z.zs, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
  z.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t remaining = in.size();
  while (true) {
    d.out.EnsureRoom(1 << 16);
    const uInt chunk_in = static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
    const uInt chunk_out = static_cast<uInt>(std::min<size_t>(d.out.room(), 1u << 30));
    z.zs.avail_in = chunk_in;
    z.zs.next_out = reinterpret_cast<Bytef*>(d.out.end());
    z.zs.avail_out = chunk_out;
    int rc = inflate(&z.zs, Z_NO_FLUSH);
    d.Grow(chunk_out - z.zs.avail_out);
    remaining -= chunk_in - z.zs.avail_in;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are one stream (gzip -c a b > c).
      if (remaining < 2 || static_cast<unsigned char>(*z.zs.next_in) != 0x1f) return d;
      inflateReset(&z.zs);
    } else if (rc == Z_BUF_ERROR && remaining == 0) {
      d.Stop("gzip stream ends early (file truncated)");
      return d;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      d.Corrupt(in.size() - remaining, z.zs.msg ? z.zs.msg : "corrupt data");
      return d;
    }
  }
}

Decoded DecompressZstd(const std::string& path, std::string_view in, size_t cap) {
  // The frame header's content size is not used even as a hint: 17 bytes can claim 1 TiB.
  Decoded d(in.size() * 5, cap, path, "zstd");
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(),
                                                              ZSTD_freeDStream);
  ZSTD_initDStream(ds.get());
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  // Runs until the input is used up and the decoder holds no more output.
  while (true) {
    d.out.EnsureRoom(1 << 16);
    ZSTD_outBuffer output{d.out.end(), d.out.room(), 0};
    size_t last = ZSTD_decompressStream(ds.get(), &output, &input);
    d.Grow(output.pos);
    if (ZSTD_isError(last)) {
      d.Corrupt(input.pos, ZSTD_getErrorName(last));
      return d;
    }
    if (input.pos == input.size && (last == 0 || output.pos < output.size)) {
      if (last != 0) d.Stop("zstd stream ends early (file truncated)");
      return d;
    }
  }
}

}  // namespace

Compression DetectCompression(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return Compression::kGzip;
  if (head.starts_with("\x28\xb5\x2f\xfd")) return Compression::kZstd;
  return Compression::kNone;
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
  Decoded decoded = result.compression_ == Compression::kGzip ? InflateGzip(path, raw, cap)
                                                              : DecompressZstd(path, raw, cap);
  result.size_ = decoded.out.size();
  result.owned_ = decoded.out.Release();
  result.data_ = result.owned_.get();
  result.truncated_ = decoded.truncated;
  result.truncation_reason_ = decoded.reason;
  return result;
}

void InputText::ReleaseBefore(size_t offset) const {
  if (!mapped_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t end = std::min(offset, size_) / page * page;
  if (end > released_) ::madvise(data_ + released_, end - released_, MADV_DONTNEED);
  released_ = std::max(released_, end);
}

bool InputText::ReadAt(size_t offset, size_t length, char* dst) const {
  return mapped_ && mapped_->ReadAt(offset, length, dst);
}

void InputText::Prefetch(size_t offset, size_t length) const {
#ifdef MADV_POPULATE_READ
  if (!mapped_ || offset >= size_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t begin = offset / page * page;
  size_t end = std::min(size_, offset + length);
  if (end > begin) ::madvise(data_ + begin, end - begin, MADV_POPULATE_READ);
#else
  (void)offset;
  (void)length;
#endif
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
