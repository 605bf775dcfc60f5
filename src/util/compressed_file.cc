#include "util/compressed_file.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"
#include "util/mapped_file.h"

namespace sextant {
namespace {

// A growable buffer that always keeps kInputPadding zero bytes of slack at the end.
class PaddedBuffer {
 public:
  explicit PaddedBuffer(size_t capacity) { Reserve(std::max<size_t>(capacity, 4096)); }
  char* end() { return data_.get() + size_; }
  size_t room() const { return capacity_ - size_; }
  void Grow(size_t n) { size_ += n; }
  void EnsureRoom(size_t min_room) {
    if (room() < min_room) Reserve(std::max(capacity_ + capacity_ / 2, size_ + min_room));
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
};

struct Decoded {
  std::unique_ptr<char[]> data;
  size_t size = 0;
  bool truncated = false;
  std::string reason;
};

Decoded InflateGzip(const std::string& path, std::string_view in) {
  // The gzip trailer holds the uncompressed size mod 2^32 (RFC 1952 ISIZE): a good first guess.
  size_t hint = in.size() * 4;
  if (in.size() >= 18) {
    uint32_t isize;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    size_t guess = isize;
    while (guess < in.size()) guess += size_t{1} << 32;
    // deflate cannot expand more than ~1032:1; a larger claim is a cut or corrupt trailer.
    if (guess <= in.size() * 1032) hint = guess + 1;
  }
  PaddedBuffer out(hint);
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t remaining = in.size();
  Decoded result;
  while (true) {
    out.EnsureRoom(1 << 16);
    const uInt chunk_in = static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
    const uInt chunk_out = static_cast<uInt>(std::min<size_t>(out.room(), 1u << 30));
    zs.avail_in = chunk_in;
    zs.next_out = reinterpret_cast<Bytef*>(out.end());
    zs.avail_out = chunk_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.Grow(chunk_out - zs.avail_out);
    remaining -= chunk_in - zs.avail_in;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are one stream (gzip -c a b > c).
      if (remaining >= 2 && static_cast<unsigned char>(*zs.next_in) == 0x1f) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && remaining == 0) {
      result.truncated = true;
      result.reason = "gzip stream ends early (file truncated)";
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      size_t offset = in.size() - remaining;
      std::string msg = zs.msg ? zs.msg : "corrupt data";
      inflateEnd(&zs);
      if (out.size() == 0) {
        ThrowUserError(SourceLocation{path, -1, -1, static_cast<int64_t>(offset)}, "",
                       "invalid gzip data: " + msg);
      }
      result.truncated = true;
      result.reason = fmt::format("gzip data corrupt at compressed byte {}: {}", offset, msg);
      break;
    }
  }
  inflateEnd(&zs);
  result.size = out.size();
  result.data = out.Release();
  return result;
}

Decoded DecompressZstd(const std::string& path, std::string_view in) {
  unsigned long long content = ZSTD_getFrameContentSize(in.data(), in.size());
  size_t hint = (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR)
                    ? in.size() * 5
                    : static_cast<size_t>(content);
  PaddedBuffer out(hint);
  ZSTD_DStream* ds = ZSTD_createDStream();
  ZSTD_initDStream(ds);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  Decoded result;
  size_t last = 1;
  while (input.pos < input.size) {
    out.EnsureRoom(1 << 16);
    ZSTD_outBuffer output{out.end(), out.room(), 0};
    last = ZSTD_decompressStream(ds, &output, &input);
    out.Grow(output.pos);
    if (ZSTD_isError(last)) {
      std::string msg = ZSTD_getErrorName(last);
      ZSTD_freeDStream(ds);
      if (out.size() == 0) {
        ThrowUserError(SourceLocation{path, -1, -1, static_cast<int64_t>(input.pos)}, "",
                       "invalid zstd data: " + msg);
      }
      result.truncated = true;
      result.reason = fmt::format("zstd data corrupt at compressed byte {}: {}", input.pos, msg);
      result.size = out.size();
      result.data = out.Release();
      return result;
    }
    if (output.pos == 0 && input.pos == input.size) break;
  }
  // Drain output still buffered inside the decoder.
  while (last != 0) {
    out.EnsureRoom(1 << 16);
    ZSTD_outBuffer output{out.end(), out.room(), 0};
    last = ZSTD_decompressStream(ds, &output, &input);
    out.Grow(output.pos);
    if (ZSTD_isError(last) || output.pos == 0) break;
  }
  if (last != 0) {
    result.truncated = true;
    result.reason = "zstd stream ends early (file truncated)";
  }
  ZSTD_freeDStream(ds);
  result.size = out.size();
  result.data = out.Release();
  return result;
}

}  // namespace

Compression DetectCompression(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return Compression::kGzip;
  }
  if (head.size() >= 4 && static_cast<unsigned char>(head[0]) == 0x28 &&
      static_cast<unsigned char>(head[1]) == 0xb5 && static_cast<unsigned char>(head[2]) == 0x2f &&
      static_cast<unsigned char>(head[3]) == 0xfd) {
    return Compression::kZstd;
  }
  return Compression::kNone;
}

InputText::InputText(InputText&&) noexcept = default;
InputText& InputText::operator=(InputText&&) noexcept = default;
InputText::~InputText() = default;

InputText InputText::Load(const std::string& path) {
  auto mapped = std::make_unique<MappedFile>(path, kInputPadding);
  InputText result;
  result.compressed_size_ = mapped->size();
  std::string_view raw(mapped->data(), mapped->size());
  result.compression_ = DetectCompression(raw);
  if (result.compression_ == Compression::kNone) {
    mapped->AdviseSequential();
    result.data_ = mapped->writable_data();
    result.size_ = mapped->size();
    result.mapped_ = std::move(mapped);
    return result;
  }
  mapped->AdviseSequential();
  Decoded decoded = result.compression_ == Compression::kGzip ? InflateGzip(path, raw)
                                                              : DecompressZstd(path, raw);
  result.owned_ = std::move(decoded.data);
  result.data_ = result.owned_.get();
  result.size_ = decoded.size;
  result.truncated_ = decoded.truncated;
  result.truncation_reason_ = decoded.reason;
  return result;
}

void InputText::ReleaseBefore(size_t offset) const {
  if (!mapped_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t end = std::min(offset, size_) / page * page;
  if (end > 0) ::madvise(data_, end, MADV_DONTNEED);
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
  std::FILE* file = nullptr;
  Compression compression = Compression::kNone;
  z_stream zs{};
  ZSTD_CStream* zstd = nullptr;
  std::string buffer;
  bool closed = false;
};

OutputFile::OutputFile(const std::string& path) : state_(std::make_unique<State>()), path_(path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  state_->file = std::fopen(path.c_str(), "wb");
  if (!state_->file)
    ThrowUserError(SourceLocation{path}, "", std::string("cannot create: ") + std::strerror(errno));
  if (ends_with(".gz")) {
    state_->compression = Compression::kGzip;
    // windowBits 15 + 16 selects a gzip header; level 4 trades a little size for speed.
    deflateInit2(&state_->zs, 4, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  } else if (ends_with(".zst")) {
    state_->compression = Compression::kZstd;
    state_->zstd = ZSTD_createCStream();
    ZSTD_initCStream(state_->zstd, 3);
  }
  state_->buffer.resize(1 << 18);
}

void OutputFile::Write(std::string_view bytes) {
  State& s = *state_;
  auto put = [&](const char* data, size_t n) {
    if (n && std::fwrite(data, 1, n, s.file) != n) {
      ThrowUserError(SourceLocation{path_}, "",
                     std::string("write failed: ") + std::strerror(errno));
    }
  };
  if (s.compression == Compression::kNone) {
    put(bytes.data(), bytes.size());
  } else if (s.compression == Compression::kGzip) {
    s.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    s.zs.avail_in = static_cast<uInt>(bytes.size());
    while (s.zs.avail_in > 0) {
      s.zs.next_out = reinterpret_cast<Bytef*>(s.buffer.data());
      s.zs.avail_out = static_cast<uInt>(s.buffer.size());
      deflate(&s.zs, Z_NO_FLUSH);
      put(s.buffer.data(), s.buffer.size() - s.zs.avail_out);
    }
  } else {
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{s.buffer.data(), s.buffer.size(), 0};
      ZSTD_compressStream(s.zstd, &out, &in);
      put(s.buffer.data(), out.pos);
    }
  }
}

void OutputFile::Close() {
  State& s = *state_;
  if (s.closed) return;
  s.closed = true;
  bool ok = true;
  if (s.compression == Compression::kGzip) {
    int rc;
    do {
      s.zs.next_out = reinterpret_cast<Bytef*>(s.buffer.data());
      s.zs.avail_out = static_cast<uInt>(s.buffer.size());
      rc = deflate(&s.zs, Z_FINISH);
      size_t n = s.buffer.size() - s.zs.avail_out;
      ok = ok && std::fwrite(s.buffer.data(), 1, n, s.file) == n;
    } while (rc == Z_OK);
    deflateEnd(&s.zs);
  } else if (s.compression == Compression::kZstd) {
    size_t left;
    do {
      ZSTD_outBuffer out{s.buffer.data(), s.buffer.size(), 0};
      left = ZSTD_endStream(s.zstd, &out);
      ok = ok && std::fwrite(s.buffer.data(), 1, out.pos, s.file) == out.pos;
    } while (left > 0 && !ZSTD_isError(left));
    ZSTD_freeCStream(s.zstd);
  }
  ok = (std::fclose(s.file) == 0) && ok;
  if (!ok) ThrowUserError(SourceLocation{path_}, "", "write failed");
}

OutputFile::~OutputFile() {
  try {
    Close();
  } catch (...) {
  }
}

}  // namespace sextant
