// Private (copy-on-write) memory mapping of a whole file, followed by at least `padding` zero
// bytes that are safe to read (simdjson reads up to 64 bytes past the end of its input).
// Writes stay in this process: the file itself never changes.
//
// If another process truncates the file while it is mapped, touching a page past the new end
// raises SIGBUS. A handler installed with the first mapping recognises addresses inside any live
// mapping and ends the program with one line naming the file and byte offset (status 1, like any
// other input error) instead of a crash; SIGBUS anywhere else keeps its default action.
#pragma once

#include <cstddef>
#include <string>

namespace sextant {

class MappedFile {
 public:
  // Throws UserError (with the path) if the file cannot be opened or mapped.
  explicit MappedFile(const std::string& path, size_t padding = 64);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  char* writable_data() const { return data_; }
  size_t size() const { return size_; }
  // Hints the kernel that the mapping will be read front to back.
  void AdviseSequential() const;
  // Tells the kernel that bytes before `offset` will not be read again, so their pages can
  // leave this process's resident set (they are re-read from the file if touched again).
  void ReleaseBefore(size_t offset) const;
  // Copies [offset, offset + length) of the file to `dst` with pread; false on a read error
  // or a file that became shorter (the caller then reads the mapping instead).
  bool ReadAt(size_t offset, size_t length, char* dst) const;

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;      // file pages plus the zero padding pages
  int guard_slot_ = -1;          // this mapping's entry in the SIGBUS guard, or -1
  int fd_ = -1;                  // kept open for ReadAt
  mutable size_t released_ = 0;  // bytes before this are already released
};

}  // namespace sextant
