#include "util/mapped_file.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sextant {
namespace {

namespace fs = std::filesystem;

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sextant_mapped_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(MappedFileTest, ReadsTheFileFollowedByZeroPadding) {
  std::string path = Write("a.json", "[1,2,3]");
  MappedFile mapped(path, 64);
  ASSERT_EQ(mapped.size(), 7u);
  EXPECT_EQ(std::string(mapped.data(), mapped.size()), "[1,2,3]");
  for (size_t i = 7; i < 7 + 64; ++i) EXPECT_EQ(mapped.data()[i], '\0') << i;
}

TEST_F(MappedFileTest, WritesStayInTheProcess) {
  std::string path = Write("a.json", "abc");
  {
    MappedFile mapped(path);
    mapped.writable_data()[0] = 'X';
    EXPECT_EQ(mapped.data()[0], 'X');
  }
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "abc");
}

// Another process truncating a mapped file makes the pages past the new end raise SIGBUS; the
// program must end with the file and the offset named, as for any other input error.
TEST_F(MappedFileTest, FileTruncatedWhileMappedEndsWithOneLineNamingFileAndOffset) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::string path = Write("shrinks.json", std::string(3 * page, 'x'));
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        MappedFile mapped(path);
        if (::truncate(path.c_str(), 0) != 0) ::_exit(3);
        volatile char c = mapped.data()[2 * page + 5];
        (void)c;
      },
      ::testing::ExitedWithCode(1),
      "shrinks.json@" + std::to_string(2 * page + 5) + ": the file became shorter");
}

}  // namespace
}  // namespace sextant
