#include "util/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <thread>

#include "util/compressed_file.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sextant_file_io_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static void Put(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string Get(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  size_t Entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  // The message of the UserError `f` throws ("" if it throws none).
  template <typename F>
  static std::string ErrorOf(F&& f) {
    try {
      f();
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(FileIoTest, ReplacesAtomicallyAndKeepsThePermissions) {
  std::string out = Path("out.json");
  Put(out, "old contents");
  ::chmod(out.c_str(), 0640);
  WriteFileAtomically(out, "new");
  EXPECT_EQ(Get(out), "new");
  EXPECT_EQ(fs::status(out).permissions(), fs::perms(0640));
  EXPECT_EQ(Entries(), 1u);  // no temporary file left behind
}

// The rename that replaces an output needs only the directory's permission: a file marked
// read-only (for everyone, so root too) is refused instead of swapped.
TEST_F(FileIoTest, AReadOnlyFileIsNotReplaced) {
  std::string out = Path("kept.json");
  Put(out, "precious");
  ::chmod(out.c_str(), 0444);
  const std::string expected =
      out + ": exists and is not writable: not replaced (make it writable, or choose another name)";
  EXPECT_EQ(ErrorOf([&] { WriteFileAtomically(out, "new"); }), expected);
  EXPECT_EQ(ErrorOf([&] { CheckOutputFile(out, {}); }), expected);
  EXPECT_EQ(Get(out), "precious");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(FileIoTest, AnUncommittedWriteLeavesNoFileAndTheOldOneIntact) {
  std::string old_file = Path("old.json"), new_file = Path("new.json");
  Put(old_file, "old contents");
  {
    AtomicFile a(old_file), b(new_file);
    a.Write("half of the ");
    b.Write("half of the ");
    EXPECT_EQ(Get(old_file), "old contents");  // nothing visible before Commit
  }                                            // as when an exception leaves the writer
  EXPECT_EQ(Get(old_file), "old contents");
  EXPECT_FALSE(fs::exists(new_file));
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(FileIoTest, RefusesToOverwriteAnInputUnderAnotherName) {
  std::string input = Path("a.json");
  Put(input, "{}");
  fs::create_symlink(input, Path("link.json"));
  fs::create_hard_link(input, Path("hard.json"));
  fs::create_directory(Path("sub"));
  const std::vector<std::string> inputs = {Path("other.json"), input};
  for (std::string out : {input, Path("sub/../a.json"), Path("link.json"), Path("hard.json")}) {
    std::string error = ErrorOf([&] { WriteFileAtomically(out, "x", inputs); });
    EXPECT_NE(error.find("is the same file as the input " + input), std::string::npos) << out;
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
  // An input named through a link is caught as well.
  EXPECT_NE(ErrorOf([&] { WriteFileAtomically(input, "x", {Path("link.json")}); }), "");
  EXPECT_EQ(Get(input), "{}");
  EXPECT_EQ(ErrorOf([&] { WriteFileAtomically(Path("b.json"), "x", inputs); }), "");
}

TEST_F(FileIoTest, ASymlinkAtTheOutputIsReplacedNotFollowed) {
  std::string target = Path("target.json"), link = Path("link.json");
  Put(target, "target");
  fs::create_symlink(target, link);
  WriteFileAtomically(link, "new");
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(Get(link), "new");
  EXPECT_EQ(Get(target), "target");
}

TEST_F(FileIoTest, APipeAtTheOutputIsWrittenInPlaceNotReplaced) {
  // /dev/null, /dev/stdout and named pipes: a rename over them would replace the node itself.
  const std::string fifo = Path("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  WriteFileAtomically(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(FileIoTest, RefusesADirectoryAsOutput) {
  fs::create_directory(Path("d"));
  EXPECT_NE(ErrorOf([&] { WriteFileAtomically(Path("d"), "x"); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] { WriteFileAtomically(Path("missing/x.json"), "x"); }).find("cannot create"),
      std::string::npos);
}

// Checked before a long analysis: the same refusals as the write, and a missing directory.
TEST_F(FileIoTest, OutputPathsAreCheckedBeforeAnyWork) {
  Put(Path("in.json"), "{}");
  fs::create_directory(Path("d"));
  EXPECT_EQ(ErrorOf([&] { CheckOutputFile(Path("out.html"), {Path("in.json")}); }), "");
  EXPECT_EQ(ErrorOf([&] { CheckOutputFile("", {}); }), "");
  EXPECT_NE(ErrorOf([&] {
              CheckOutputFile(Path("in.json"), {Path("in.json")});
            }).find("refusing to overwrite it"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { CheckOutputFile(Path("d"), {}); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { CheckOutputFile(Path("missing/x.xlsx"), {}); }).find("does not exist"),
            std::string::npos);
  // A CSV directory may be new, several levels deep, under an existing one; not under a file.
  EXPECT_EQ(ErrorOf([&] { CheckOutputDirectory(Path("new/deeper")); }), "");
  EXPECT_EQ(ErrorOf([&] { CheckOutputDirectory(Path("d")); }), "");
  EXPECT_NE(ErrorOf([&] { CheckOutputDirectory(Path("in.json")); }).find("is not a directory"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { CheckOutputDirectory(Path("in.json/sub")); }).find("not a directory"),
            std::string::npos);
}

// "-" is standard output to many tools: refused, with how to say either meaning, and no file
// called "-" appears in the working directory.
TEST_F(FileIoTest, DashIsRefusedAsAnOutputName) {
  const std::string error = ErrorOf([&] { WriteFileAtomically("-", "x"); });
  EXPECT_NE(error.find("/dev/stdout"), std::string::npos) << error;
  EXPECT_NE(error.find("./-"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists("-"));
  EXPECT_NE(ErrorOf([&] { CheckOutputFile("-", {}); }).find("/dev/stdout"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { CheckOutputDirectory("-"); }).find("/dev/stdout"), std::string::npos);
}

TEST_F(FileIoTest, ReadsUpToTheLimit) {
  std::string path = Path("hundred");
  Put(path, std::string(100, 'z'));
  EXPECT_EQ(ReadFile(path, 100), std::string(100, 'z'));
  EXPECT_NE(ErrorOf([&] { ReadFile(path, 99); }).find("larger than the 99-byte limit"),
            std::string::npos);
  Put(Path("empty"), "");
  EXPECT_EQ(ReadFile(Path("empty")), "");
}

TEST_F(FileIoTest, ReadsFilesThatReportSizeZero) {
  // /proc files claim 0 bytes; reading must go to the end, not stop at st_size.
  EXPECT_NE(ReadFile("/proc/self/status").find("Name:"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ReadFile("/proc/self/status", 10); }), "");
}

TEST_F(FileIoTest, RefusesFifosAndDirectoriesWithoutBlocking) {
  std::string fifo = Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Without O_NONBLOCK, opening a FIFO nobody writes to blocks forever.
  auto reading = std::async(std::launch::async, [&] {
    return ErrorOf([&] { ReadFile(fifo); }) + "|" + ErrorOf([&] { InputText::Load(fifo); });
  });
  if (reading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    ADD_FAILURE() << "reading a FIFO blocked";
    reading.wait();
    ::close(unblock);
    return;
  }
  EXPECT_EQ(reading.get(),
            fifo + ": is a FIFO, not a regular file|" + fifo + ": is a FIFO, not a regular file");
  EXPECT_EQ(ErrorOf([&] { ReadFile(dir_.string()); }),
            dir_.string() + ": is a directory, not a regular file");
  EXPECT_NE(ErrorOf([] { ReadFile("/dev/zero"); }).find("is a device"), std::string::npos);
}

// --xlsx report.csv would leave a workbook every tool opens as CSV: refused, naming the format.
TEST_F(FileIoTest, AnOutputNamedForAnotherFormatIsRefused) {
  EXPECT_EQ(ErrorOf([] { RefuseOtherFormatName("out/report.csv", ".xlsx"); }),
            "out/report.csv: is named as a csv file, but an Excel workbook is written to it: name "
            "it ....xlsx");
  EXPECT_NE(ErrorOf([] { RefuseOtherFormatName("page.JSON", ".html"); }).find("an HTML page"),
            std::string::npos);
  // The format's own extensions, and names without one, pass.
  EXPECT_EQ(ErrorOf([] { RefuseOtherFormatName("page.htm", ".html"); }), "");
  EXPECT_EQ(ErrorOf([] { RefuseOtherFormatName("Report.XLSX", ".xlsx"); }), "");
  EXPECT_EQ(ErrorOf([] { RefuseOtherFormatName("/dev/null", ".xlsx"); }), "");
  EXPECT_EQ(ErrorOf([] { RefuseOtherFormatName("report", ".html"); }), "");
}

}  // namespace
}  // namespace sextant
