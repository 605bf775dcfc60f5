#include "util/compressed_file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
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
