#include "util/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

// Live mappings the SIGBUS handler knows about. A fixed table of lock-free atomics, because a
// signal handler may read nothing else; mappings beyond its size are simply not guarded.
struct GuardedMapping {
  std::atomic<const char*> begin{nullptr};
  std::atomic<size_t> length{0};
  std::atomic<const char*> path{nullptr};  // owned copy, freed when the slot is released
};
constexpr int kGuardSlots = 64;
GuardedMapping guarded_mappings[kGuardSlots];

void WriteToStderr(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

void OnBusError(int signal, siginfo_t* info, void*) {
  const char* address = static_cast<const char*>(info->si_addr);
  for (const GuardedMapping& slot : guarded_mappings) {
    const char* begin = slot.begin.load();
    const char* path = slot.path.load();
    if (!begin || !path || address < begin || address >= begin + slot.length.load()) continue;
    // Only async-signal-safe calls from here on: format the offset by hand.
    char digits[24];
    int n = 0;
    auto offset = static_cast<uint64_t>(address - begin);
    do {
      digits[n++] = static_cast<char>('0' + offset % 10);
      offset /= 10;
    } while (offset > 0 && n < 23);
    char offset_text[24];
    for (int i = 0; i < n; ++i) offset_text[i] = digits[n - 1 - i];
    offset_text[n] = '\0';
    WriteToStderr("sextant: error: ");
    WriteToStderr(path);
    WriteToStderr("@");
    WriteToStderr(offset_text);
    WriteToStderr(
        ": the file became shorter while it was being read (changed by another process?)\n");
    ::_exit(1);
  }
  // Not one of ours: let the default action happen (core dump with the real address).
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void InstallBusErrorHandler() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = OnBusError;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, nullptr);
  });
}

int GuardMapping(const char* begin, size_t length, const std::string& path) {
  InstallBusErrorHandler();
  for (int i = 0; i < kGuardSlots; ++i) {
    const char* expected = nullptr;
    GuardedMapping& slot = guarded_mappings[i];
    // Claim the slot through its path, then publish the range the handler compares against.
    if (slot.path.load() != nullptr) continue;
    char* copy = ::strdup(path.c_str());
    if (!copy) return -1;
    if (!slot.path.compare_exchange_strong(expected, copy)) {
      std::free(copy);
      continue;
    }
    slot.length.store(length);
    slot.begin.store(begin);
    return i;
  }
  return -1;
}

void ReleaseGuard(int index) {
  if (index < 0) return;
  GuardedMapping& slot = guarded_mappings[index];
  slot.begin.store(nullptr);
  slot.length.store(0);
  std::free(const_cast<char*>(slot.path.exchange(nullptr)));
}

}  // namespace

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
  fd_ = fd;
  data_ = static_cast<char*>(base);
  if (size_ > 0) guard_slot_ = GuardMapping(data_, size_, path);
}

MappedFile::~MappedFile() {
  ReleaseGuard(guard_slot_);
  if (data_) ::munmap(data_, mapped_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

bool MappedFile::ReadAt(size_t offset, size_t length, char* dst) const {
  if (offset > size_ || length > size_ - offset) return false;
  while (length > 0) {
    ssize_t n = ::pread(fd_, dst, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dst += n;
    offset += static_cast<size_t>(n);
    length -= static_cast<size_t>(n);
  }
  return true;
}

void MappedFile::ReleaseBefore(size_t offset) const {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = std::min(offset, size_) / page * page;
  if (end > released_) ::madvise(data_ + released_, end - released_, MADV_DONTNEED);
  released_ = std::max(released_, end);
}

void MappedFile::AdviseSequential() const {
  if (data_ && size_) ::madvise(data_, size_, MADV_SEQUENTIAL);
}

}  // namespace sextant
