// Private (copy-on-write) memory mapping of a whole file, followed by at least `padding` zero
// bytes that are safe to read (simdjson reads up to 64 bytes past the end of its input).
// Writes stay in this process: the file itself never changes.
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

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // file pages plus the zero padding pages
};

}  // namespace sextant
