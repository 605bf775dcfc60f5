// Whole-file reads and writes of user-named paths. Reads refuse anything that is not a regular
// file (a FIFO or device would block or never end) and stop at a size limit. Writes go to a
// temporary file beside the target that is renamed over it once complete, so a failed run
// never leaves an empty or half-written output, and they refuse to overwrite an input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

inline constexpr int64_t kDefaultReadLimit = int64_t{4} << 30;  // 4 GiB

// Opens `path` read-only and returns the descriptor (the caller closes it), with the file's size
// in `*size`. Opens with O_NONBLOCK, so a FIFO without a writer cannot hang the open. Throws
// UserError naming the path if it cannot be opened or is not a regular file.
int OpenRegularFile(const std::string& path, int64_t* size);

// The whole file; UserError if it cannot be read, is not a regular file, or holds more than
// `max_bytes` bytes.
std::string ReadFile(const std::string& path, int64_t max_bytes = kDefaultReadLimit);

// At most the first `max_bytes` of the file (fewer if it is shorter): enough to tell one
// format from another without reading a trace of gigabytes. UserError as ReadFile.
std::string ReadFileHead(const std::string& path, size_t max_bytes);

// Whether the paths name one file: the same device and inode once links are followed when both
// exist, the same normalised absolute path when neither does (outputs not written yet).
bool SameFile(const std::string& a, const std::string& b);
// Throws UserError if `output` exists and is the same file as one of `inputs` (same device and
// inode once links are followed: ./a.json, an absolute path, a symbolic or a hard link to an
// input are all caught).
void RefuseOverwritingInput(const std::string& output, const std::vector<std::string>& inputs);

// Before a long analysis: UserError now, rather than after it, if the output file `path` could
// not be written (an input, an existing file the user may not write, a directory, a directory
// that does not exist or cannot be written). Empty `path`: nothing to check.
void CheckOutputFile(const std::string& path, const std::vector<std::string>& inputs);
// UserError if the output file `path` is named for another format than the one written to it
// (`extension`, ".xlsx" or ".html"): `--xlsx report.csv` would leave a workbook that every
// tool opens as CSV. Names with no known extension (/dev/null, "report") pass.
void RefuseOtherFormatName(const std::string& path, std::string_view extension);
// The same for an output directory: `dir` must be a writable directory, or not exist yet with
// a writable directory as its closest existing ancestor.
void CheckOutputDirectory(const std::string& dir);

// A new file under a temporary name in the directory of `path`; Commit() renames it over `path`.
// Destroyed without Commit (an error was thrown), the temporary file is removed and `path` is
// untouched. A symbolic link at `path` is replaced by the new file: its target is never written.
// A device, FIFO or socket at `path` (/dev/null, /dev/stdout) is written in place.
class AtomicFile {
 public:
  // Throws UserError if `path` is a directory, one of `inputs`, an existing file the user may
  // not write, or its directory is not writable.
  explicit AtomicFile(const std::string& path, const std::vector<std::string>& inputs = {});
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Write(std::string_view bytes);
  // For libraries that write a file by name themselves: write here, then Commit().
  const std::string& temp_path() const { return temp_; }
  // Flushes to disk and renames over `path`; throws UserError on failure.
  void Commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
  bool direct_ = false;  // writing into a device or pipe, not a temporary file
};

void WriteFileAtomically(const std::string& path, std::string_view bytes,
                         const std::vector<std::string>& inputs = {});

}  // namespace sextant
