#include "util/compressed_file.h"

#include <gtest/gtest.h>

#include <zlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "util/error.h"
#include "util/mapped_file.h"
#include "util/thread_pool.h"

namespace sextant {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("sextant_cf_" + name)).string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string SampleText() {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"name\": \"event " + std::to_string(i) + "\"},\n";
  return text;
}

TEST(CompressedFileTest, DetectsMagicBytes) {
  EXPECT_EQ(DetectCompression("\x1f\x8b\x08"), Compression::kGzip);
  EXPECT_EQ(DetectCompression("\x28\xb5\x2f\xfd\x00"), Compression::kZstd);
  EXPECT_EQ(DetectCompression("{\"a\":1}"), Compression::kNone);
  EXPECT_EQ(DetectCompression(""), Compression::kNone);
  // Formats that are not read are named by their magic bytes.
  EXPECT_EQ(UnreadCompressionName("BZh91AY&SY"), "bzip2");
  EXPECT_EQ(UnreadCompressionName(std::string_view("\xFD"
                                                   "7zXZ\x00\x00",
                                                   7)),
            "xz");
  EXPECT_EQ(UnreadCompressionName("PK\x03\x04\x14"), "zip");
  EXPECT_EQ(UnreadCompressionName("7z\xBC\xAF\x27\x1C\x00"), "7-Zip");
  EXPECT_EQ(UnreadCompressionName("\x04\x22\x4D\x18\x64"), "lz4");
  EXPECT_EQ(UnreadCompressionName("\x1f\x8b\x08"), "");  // gzip is read
  EXPECT_EQ(UnreadCompressionName("{\"a\":1}"), "");
}

// Compression is recognised by magic bytes; a name that promises one the bytes are not in is
// said with both: the extension and what the file starts with.
TEST(CompressedFileTest, NamesACompressionTheBytesAreNotIn) {
  EXPECT_EQ(MisnamedCompression("t.json.gz", "hello\n"),
            "named .gz, but not gzip: it starts with 68 65 6c 6c 6f 0a (\"hello.\"), not "
            "gzip's 1f 8b");
  EXPECT_EQ(MisnamedCompression("T.JSON.ZST", "BZh91AY&SY"),
            "named .zst, but not zstd: it starts with 42 5a 68 39 31 41 59 26 (\"BZh91AY&\"), "
            "not zstd's 28 b5 2f fd");
  EXPECT_EQ(MisnamedCompression("t.json.gz", ""), "named .gz, but empty: not gzip");
  // Gzip under either name, or no compression named: nothing to say.
  EXPECT_EQ(MisnamedCompression("t.json.gz", "\x1f\x8b\x08"), "");
  EXPECT_EQ(MisnamedCompression("t.json.zst", "\x1f\x8b\x08"), "");
  EXPECT_EQ(MisnamedCompression("t.json", "hello"), "");
  EXPECT_EQ(MisnamedCompression("gz", "hello"), "");
}

TEST(CompressedFileTest, PlainFileIsMappedWithZeroPadding) {
  std::string path = TempPath("plain.json");
  std::string text(4096, 'x');  // exactly one page: padding must come from extra pages
  WriteAll(path, text);
  InputText in = InputText::Load(path);
  EXPECT_EQ(in.compression(), Compression::kNone);
  ASSERT_EQ(in.text(), text);
  for (size_t i = 0; i < InputText::kInputPadding; ++i)
    EXPECT_EQ(in.text().data()[text.size() + i], 0);
  std::filesystem::remove(path);
}

// Released pages of a private mapping come back from the file when read again: a hint that
// must never change the text.
TEST(CompressedFileTest, ReleasedPagesKeepTheirBytes) {
  std::string path = TempPath("release.json");
  const std::string text = SampleText();  // ~500 KB: many pages
  WriteAll(path, text);
  InputText in = InputText::Load(path);
  in.ReleaseBefore(200 << 10);
  in.ReleaseBefore(100 << 10);  // behind what is already released: nothing to do
  in.ReleaseBefore(text.size() * 2);
  EXPECT_EQ(in.text(), text);
  std::filesystem::remove(path);
}

TEST(CompressedFileTest, GzipAndZstdRoundTripThroughOutputFile) {
  std::string text = SampleText();
  for (std::string suffix : {".gz", ".zst", ".json"}) {
    std::string path = TempPath("round" + suffix);
    {
      OutputFile out(path);
      out.Write(text.substr(0, 1000));
      out.Write(text.substr(1000));
      out.Close();
    }
    InputText in = InputText::Load(path);
    EXPECT_EQ(in.compression(), suffix == ".gz"    ? Compression::kGzip
                                : suffix == ".zst" ? Compression::kZstd
                                                   : Compression::kNone);
    EXPECT_FALSE(in.truncated()) << suffix;
    EXPECT_EQ(in.text(), text) << suffix;
    if (suffix != ".json") {
      EXPECT_LT(in.compressed_size(), text.size() / 4);
    }
    std::filesystem::remove(path);
  }
}

TEST(CompressedFileTest, TruncatedStreamsKeepWhatWasDecoded) {
  std::string text = SampleText();
  for (std::string suffix : {".gz", ".zst"}) {
    std::string full = TempPath("full" + suffix);
    {
      OutputFile out(full);
      out.Write(text);
      out.Close();
    }
    std::string bytes = ReadAll(full);
    std::string cut = TempPath("cut" + suffix);
    WriteAll(cut, bytes.substr(0, bytes.size() / 2));
    InputText in = InputText::Load(cut);
    EXPECT_TRUE(in.truncated()) << suffix;
    EXPECT_FALSE(in.truncation_reason().empty());
    EXPECT_GT(in.text().size(), 0u);
    EXPECT_LT(in.text().size(), text.size());
    EXPECT_EQ(text.substr(0, in.text().size()), in.text()) << suffix;
    std::filesystem::remove(full);
    std::filesystem::remove(cut);
  }
}

TEST(CompressedFileTest, GarbageAfterMagicIsAClearError) {
  std::string path = TempPath("bad.gz");
  WriteAll(path, std::string("\x1f\x8b\x08\x00garbage-garbage-garbage", 27));
  try {
    InputText::Load(path);
    ADD_FAILURE() << "corrupt gzip was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid gzip data"), std::string::npos) << e.what();
  }
  EXPECT_THROW(InputText::Load(TempPath("does-not-exist")), UserError);
  std::filesystem::remove(path);
}

// gzip (RFC 1952) of `text` at zlib's best compression: what every test below reads back
// through InputText checks GzipBytes too.
std::string Gzip(const std::string& text) { return GzipBytes(text, 9); }

std::string LoadError(const std::string& path, const InputLimits& limits = {}) {
  try {
    InputText::Load(path, limits);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(CompressedFileTest, RefusesAGzipBomb) {
  // 16 MiB of zeros deflate to ~16 KB: a ratio above the 200 allowed by default.
  const size_t ratio = InputLimits{}.max_ratio;
  ASSERT_EQ(ratio, 200u);
  std::string bomb = Gzip(std::string(16 << 20, '\0'));
  ASSERT_LT(bomb.size() * ratio, size_t{16} << 20);
  std::string path = TempPath("bomb.gz");
  WriteAll(path, bomb);
  const size_t cap = bomb.size() * ratio;
  EXPECT_EQ(LoadError(path),
            path + ": gzip data expands beyond " + std::to_string(cap) + " bytes; refusing");
  // The same file under a higher ratio, and a normal file under a lower size cap.
  EXPECT_EQ(InputText::Load(path, {.max_ratio = 2000}).text().size(), size_t{16} << 20);
  std::string normal = TempPath("normal.gz");
  WriteAll(normal, Gzip(SampleText()));
  EXPECT_EQ(InputText::Load(normal).text(), SampleText());
  EXPECT_EQ(LoadError(normal, {.max_bytes = 1000}),
            normal + ": gzip data expands beyond 1000 bytes; refusing");
  std::filesystem::remove(path);
  std::filesystem::remove(normal);
}

// Every piece of text, in order, whatever the format and however small the pieces asked for.
std::string ReadInPieces(TextReader& reader, size_t piece) {
  std::string text;
  std::string buffer(piece, '\0');
  double last_fraction = 0;
  while (size_t n = reader.Read(buffer.data(), piece)) {
    text.append(buffer, 0, n);
    EXPECT_GE(reader.fraction_read(), last_fraction);
    last_fraction = reader.fraction_read();
  }
  EXPECT_EQ(reader.Read(buffer.data(), piece), 0u);  // still at the end
  return text;
}

TEST(CompressedFileTest, TextReaderReadsEveryFormatFrontToBack) {
  const std::string text = SampleText();
  for (std::string suffix : {".gz", ".zst", ".json"}) {
    const std::string path = TempPath("pieces" + suffix);
    {
      OutputFile out(path);
      out.Write(text);
      out.Close();
    }
    std::unique_ptr<TextReader> reader = TextReader::Open(path);
    EXPECT_EQ(ReadInPieces(*reader, 777), text) << suffix;
    EXPECT_DOUBLE_EQ(reader->fraction_read(), 1.0) << suffix;  // every input byte used
    EXPECT_FALSE(reader->truncated()) << suffix;
    // Over text already loaded: the same bytes.
    InputText loaded = InputText::Load(path);
    EXPECT_EQ(ReadInPieces(*TextReader::Over(loaded), 4096), text) << suffix;
    std::filesystem::remove(path);
  }
}

// Read in pieces, a file is refused, or cut short, exactly as InputText::Load does it.
TEST(CompressedFileTest, TextReaderRefusesAndTruncatesAsLoadDoes) {
  const std::string bomb_path = TempPath("pieces_bomb.gz");
  WriteAll(bomb_path, Gzip(std::string(16 << 20, '\0')));
  std::unique_ptr<TextReader> bomb = TextReader::Open(bomb_path);
  try {
    ReadInPieces(*bomb, 1 << 20);
    ADD_FAILURE() << "the bomb was read";
  } catch (const UserError& e) {
    EXPECT_EQ(e.what(), LoadError(bomb_path));
  }
  const std::string garbage = TempPath("pieces_garbage.gz");
  WriteAll(garbage, std::string("\x1f\x8b\x08\x00garbage-garbage-garbage", 27));
  std::unique_ptr<TextReader> bad = TextReader::Open(garbage);
  try {
    ReadInPieces(*bad, 100);
    ADD_FAILURE() << "corrupt gzip was read";
  } catch (const UserError& e) {
    EXPECT_EQ(e.what(), LoadError(garbage));
  }
  const std::string text = SampleText();
  const std::string gz = Gzip(text);
  const std::string cut = TempPath("pieces_cut.gz");
  WriteAll(cut, gz.substr(0, gz.size() / 2));
  std::unique_ptr<TextReader> reader = TextReader::Open(cut);
  const std::string got = ReadInPieces(*reader, 1000);
  const InputText loaded = InputText::Load(cut);
  EXPECT_EQ(got, loaded.text());
  EXPECT_TRUE(reader->truncated());
  EXPECT_EQ(reader->truncation_reason(), loaded.truncation_reason());
  EXPECT_EQ(TextReader::Over(loaded)->truncation_reason(), loaded.truncation_reason());
  // Corrupt in the middle: what was decoded before the damage was found is kept (deflate may
  // emit a few wrong bytes first), whether it was decoded in one call (the whole load) or in
  // many.
  std::string damaged_gz = gz;
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) damaged_gz[i] = '\xff';
  const std::string damaged = TempPath("pieces_damaged.gz");
  WriteAll(damaged, damaged_gz);
  const InputText damaged_whole = InputText::Load(damaged);
  EXPECT_TRUE(damaged_whole.truncated());
  EXPECT_GT(damaged_whole.text().size(), text.size() / 4);
  EXPECT_TRUE(text.starts_with(damaged_whole.text().substr(0, text.size() / 4)));
  EXPECT_TRUE(ReadInPieces(*TextReader::Open(damaged), 1000) == damaged_whole.text());
  for (const std::string& path : {bomb_path, garbage, cut, damaged}) std::filesystem::remove(path);
}

// A hand-made zstd frame (RFC 8878 §3.1.1): magic, header, then `blocks` RLE blocks of 128 KiB
// of 'x' (block header: last flag, type 1 = RLE, size << 3; then the one byte repeated).
std::string ZstdRleFrame(std::string header, int blocks) {
  std::string frame = "\x28\xb5\x2f\xfd" + header;
  for (int b = 0; b < blocks; ++b) {
    const uint32_t block = (b + 1 == blocks ? 1u : 0u) | (1u << 1) | (uint32_t{128 << 10} << 3);
    frame += {static_cast<char>(block & 0xff), static_cast<char>((block >> 8) & 0xff),
              static_cast<char>(block >> 16), 'x'};
  }
  return frame;
}

TEST(CompressedFileTest, ZstdClaimedSizesAreNotTrusted) {
  // Frame content size field: 8 bytes little-endian, 2^40 = 1 TiB.
  const std::string one_tib("\x00\x00\x00\x00\x00\x01\x00\x00", 8);
  // 17 bytes: single-segment header (0xE0: 8-byte size, window = content) and one block. The
  // decoder refuses a 1 TiB window; a reader sizing its buffer from the header would have
  // asked for 1 TiB first (std::bad_alloc, or an ASan abort).
  std::string tiny = ZstdRleFrame("\xe0" + one_tib, 1);
  ASSERT_EQ(tiny.size(), 17u);
  std::string path = TempPath("claims.zst");
  WriteAll(path, tiny);
  EXPECT_NE(LoadError(path).find(path + " at byte "), std::string::npos) << LoadError(path);
  // 270 bytes: a 128 KiB window (0xC0 header, window byte 0x38 = 2^17), the same 1 TiB claim
  // and 64 blocks that really expand to 8 MiB, past the 1 MiB floor of the ratio cap.
  std::string bomb = ZstdRleFrame(std::string("\xc0\x38", 2) + one_tib, 64);
  ASSERT_EQ(bomb.size(), 270u);
  WriteAll(path, bomb);
  EXPECT_EQ(LoadError(path), path + ": zstd data expands beyond 1048576 bytes; refusing");
  // Allowed a higher ratio, it decodes until the frame ends short of its claim, and says so.
  InputText in = InputText::Load(path, {.max_ratio = 1 << 16});
  EXPECT_GT(in.text().size(), 0u);
  EXPECT_EQ(in.text().find_first_not_of('x'), std::string_view::npos);
  EXPECT_TRUE(in.truncated());
  EXPECT_NE(in.truncation_reason().find("corrupt"), std::string::npos);
  // Without a size claim (header 0x00: no content size field) the same blocks are 8 MiB.
  WriteAll(path, ZstdRleFrame(std::string("\x00\x38", 2), 64));
  EXPECT_EQ(LoadError(path), path + ": zstd data expands beyond 1048576 bytes; refusing");
  in = InputText::Load(path, {.max_ratio = 1 << 16});
  EXPECT_FALSE(in.truncated());
  EXPECT_EQ(in.text().size(), size_t{64} << 17);
  EXPECT_EQ(in.text().find_first_not_of('x'), std::string_view::npos);
  std::filesystem::remove(path);
}

TEST(CompressedFileTest, OutputAppearsOnlyWhenClosed) {
  std::string path = TempPath("unclosed.json.gz");
  WriteAll(path, "old");
  {
    OutputFile out(path, {});
    out.Write(SampleText());
  }  // destroyed without Close, as when an exception unwinds the writer
  EXPECT_EQ(ReadAll(path), "old");
  EXPECT_THROW(OutputFile(path, {path}), UserError);
  std::filesystem::remove(path);
}

TEST(ThreadPoolTest, RunsEveryJobOnceAndPropagatesErrors) {
  std::vector<std::atomic<int>> hits(100);
  ParallelFor(
      hits.size(), [&](size_t i) { hits[i]++; }, 4);
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_THROW(ParallelFor(
                   10,
                   [](size_t i) {
                     if (i == 3) throw std::runtime_error("x");
                   },
                   2),
               std::runtime_error);
}

}  // namespace
}  // namespace sextant
