#include "util/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {
namespace {

[[noreturn]] void ThrowErrno(const std::string& path, const char* what) {
  ThrowUserError(SourceLocation{path}, "", fmt::format("{}: {}", what, std::strerror(errno)));
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Outputs written in place rather than replaced: devices, pipes and sockets.
bool IsStream(mode_t mode) {
  return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode);
}

}  // namespace

int OpenRegularFile(const std::string& path, int64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) ThrowErrno(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const char* kind = KindOf(st.st_mode);
    ::close(fd);
    ThrowUserError(SourceLocation{path}, "", fmt::format("is {}, not a regular file", kind));
  }
  *size = st.st_size;
  return fd;
}

std::string ReadFile(const std::string& path, int64_t max_bytes) {
  int64_t size = 0;
  const struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } file{OpenRegularFile(path, &size)};
  // Reads to the end rather than trusting the size: /proc files report 0 bytes.
  std::string text(static_cast<size_t>(std::min(size, max_bytes)) + 1, '\0');
  size_t used = 0;
  while (size <= max_bytes && static_cast<int64_t>(used) <= max_bytes) {
    if (used == text.size()) text.resize(2 * used);
    ssize_t n = ::read(file.fd, text.data() + used, text.size() - used);
    if (n < 0 && errno != EINTR) ThrowErrno(path, "read failed");
    if (n == 0) {
      text.resize(used);
      return text;
    }
    used += static_cast<size_t>(std::max<ssize_t>(n, 0));
  }
  ThrowUserError(SourceLocation{path}, "",
                 fmt::format("file is larger than the {}-byte limit", max_bytes));
}

std::string ReadFileHead(const std::string& path, size_t max_bytes) {
  int64_t size = 0;
  const struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } file{OpenRegularFile(path, &size)};
  std::string head(max_bytes, '\0');
  size_t used = 0;
  while (used < head.size()) {
    const ssize_t n = ::read(file.fd, head.data() + used, head.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowErrno(path, "read failed");
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  head.resize(used);
  return head;
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0, b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  // Outputs not written yet: one file if the paths are one path however spelt (./x, a//x).
  const auto normal = [](const std::string& p) {
    std::error_code e;
    const std::filesystem::path absolute = std::filesystem::absolute(p, e);
    return (e ? std::filesystem::path(p) : absolute).lexically_normal();
  };
  return a_exists == b_exists && normal(a) == normal(b);
}

void RefuseOverwritingInput(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    if (SameFile(input, output)) {
      ThrowUserError(
          SourceLocation{output}, "",
          fmt::format("is the same file as the input {}; refusing to overwrite it", input));
    }
  }
}

namespace {

// Many tools read "-" as standard output; writing a file called "-" instead would surprise, and
// the console report shares standard output, so the user is told how to say either.
void RefuseDashAsOutput(const std::string& path) {
  if (path == "-") {
    ThrowUserError(SourceLocation{path}, "",
                   "is not standard output here: name /dev/stdout to write there (the console "
                   "report goes there too), or ./- for a file called '-'");
  }
}

// `dir` ("" = the current directory) must exist, be a directory and be writable.
// A file the user may not write (another user's file in a shared directory), or one marked
// read-only for everyone (chmod a-w, root included), is not replaced: the rename that writes
// outputs atomically needs only the directory's permission, so without this check a protected
// file would be silently swapped for a new one.
void RefuseReadOnlyFile(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0) {
    ThrowUserError(SourceLocation{path}, "",
                   "exists and is not writable: not replaced (make it writable, or choose "
                   "another name)");
  }
}

void RequireWritableDirectory(const std::filesystem::path& dir, const std::string& output) {
  const std::string shown = dir.empty() ? "." : dir.string();
  struct stat st {};
  if (::stat(shown.c_str(), &st) != 0) {
    ThrowUserError(SourceLocation{output}, "",
                   fmt::format("its directory {} does not exist", shown));
  }
  if (!S_ISDIR(st.st_mode)) {
    ThrowUserError(SourceLocation{output}, "", fmt::format("{} is not a directory", shown));
  }
  if (::access(shown.c_str(), W_OK | X_OK) != 0) {
    ThrowUserError(SourceLocation{output}, "",
                   fmt::format("its directory {} is not writable", shown));
  }
}

}  // namespace

void CheckOutputFile(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  RefuseDashAsOutput(path);
  RefuseOverwritingInput(path, inputs);
  RefuseReadOnlyFile(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    ThrowUserError(SourceLocation{path}, "", "is a directory");
  }
  if (::stat(path.c_str(), &st) == 0 && IsStream(st.st_mode)) return;  // written in place
  RequireWritableDirectory(std::filesystem::path(path).parent_path(), path);
}

void RefuseOtherFormatName(const std::string& path, std::string_view extension) {
  std::string lower = std::filesystem::path(path).filename().string();
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view other : {".xlsx", ".xls", ".csv", ".html", ".htm", ".json", ".gz"}) {
    if (other == extension || !lower.ends_with(other)) continue;
    if (extension == ".html" && other == ".htm") continue;
    ThrowUserError(
        SourceLocation{path}, "",
        fmt::format("is named as a {} file, but {} is written to it: name it "
                    "...{}",
                    other.substr(1), extension == ".xlsx" ? "an Excel workbook" : "an HTML page",
                    extension));
  }
}

void CheckOutputDirectory(const std::string& dir) {
  if (dir.empty()) return;
  RefuseDashAsOutput(dir);
  std::filesystem::path at(dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) ThrowUserError(SourceLocation{dir}, "", "is not a directory");
    RequireWritableDirectory(at, dir);
    return;
  }
  // create_directories makes every missing level: the closest existing one must take them.
  std::filesystem::path parent = at.parent_path();
  while (!parent.empty() && ::stat(parent.c_str(), &st) != 0) parent = parent.parent_path();
  RequireWritableDirectory(parent, dir);
}

AtomicFile::AtomicFile(const std::string& path, const std::vector<std::string>& inputs)
    : path_(path) {
  RefuseDashAsOutput(path);
  RefuseOverwritingInput(path, inputs);
  // lstat: a symbolic link at `path` is replaced by the new file, its target never written (a
  // link planted in a shared directory cannot redirect the output onto another file).
  struct stat st {};
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) ThrowUserError(SourceLocation{path}, "", "is a directory");
  RefuseReadOnlyFile(path);
  struct stat reached {};
  if (exists && !S_ISREG(st.st_mode) && ::stat(path.c_str(), &reached) == 0 &&
      IsStream(reached.st_mode)) {
    // A device, FIFO or socket (/dev/null, /dev/stdout, a named pipe), or a link to one, is
    // written in place: a rename over it would replace the device node itself.
    direct_ = true;
    temp_ = path_;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) ThrowErrno(path, "cannot open");
    return;
  }
  // A hidden name in the same directory, so the final rename never crosses file systems.
  std::filesystem::path target(path_);
  std::filesystem::path dir = target.parent_path();
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; fd_ < 0; ++attempt) {
    std::string name =
        fmt::format(".{}.{}-{}.tmp", target.filename().string(), ::getpid(), counter.fetch_add(1));
    temp_ = dir.empty() ? name : (dir / name).string();
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt > 100)) ThrowErrno(path, "cannot create");
  }
  // Keep the permissions of a file being replaced.
  if (exists && S_ISREG(st.st_mode)) (void)::fchmod(fd_, st.st_mode & 0777);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!direct_) ::unlink(temp_.c_str());
}

void AtomicFile::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowErrno(path_, "write failed");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicFile::Commit() {
  // fsync first: after a crash the new name must not point at data still in the page cache.
  // Devices and pipes have nothing to sync (fsync on them fails with EINVAL).
  if (!direct_ && ::fsync(fd_) != 0) ThrowErrno(path_, "write failed");
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) ThrowErrno(path_, "write failed");
  if (!direct_ && ::rename(temp_.c_str(), path_.c_str()) != 0) ThrowErrno(path_, "cannot replace");
  committed_ = true;
}

void WriteFileAtomically(const std::string& path, std::string_view bytes,
                         const std::vector<std::string>& inputs) {
  AtomicFile file(path, inputs);
  file.Write(bytes);
  file.Commit();
}

}  // namespace sextant
