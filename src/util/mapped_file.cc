#include "util/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {

MappedFile::MappedFile(const std::string& path, size_t padding) {
  int64_t size = 0;
  int fd = OpenRegularFile(path, &size);
  size_ = static_cast<size_t>(size);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Reserve file pages + padding as anonymous zero pages, then map the file over the front:
  // the bytes past the end of the file are zeros whether or not the size is page aligned.
  mapped_bytes_ = (size_ + padding + page - 1) / page * page;
  // Writable so that a reader may patch a few bytes in place; MAP_PRIVATE keeps such edits
  // out of the file, and only the pages written to are copied.
  const int prot = PROT_READ | PROT_WRITE;
  void* base = ::mmap(nullptr, mapped_bytes_, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    ::close(fd);
    ThrowUserError(SourceLocation{path}, "", std::string("cannot map: ") + std::strerror(errno));
  }
  if (size_ > 0) {
    void* file = ::mmap(base, size_, prot, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (file == MAP_FAILED) {
      int err = errno;
      ::munmap(base, mapped_bytes_);
      ::close(fd);
      ThrowUserError(SourceLocation{path}, "", std::string("cannot map: ") + std::strerror(err));
    }
  }
  ::close(fd);
  data_ = static_cast<char*>(base);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, mapped_bytes_);
}

void MappedFile::AdviseSequential() const {
  if (data_ && size_) ::madvise(data_, size_, MADV_SEQUENTIAL);
}

}  // namespace sextant
