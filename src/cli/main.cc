// The sextant program: parses the command line and runs one command.
// Exit status: 0 success, 1 user error (message on stderr), 2 internal error.
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_hints.h"
#include "cli/commands.h"
#include "util/error.h"

// The program's memory policy. Large blocks (event stores of million-event traces, sort
// buffers) are placed on 2 MiB-aligned ranges marked for transparent huge pages: first touch
// then costs one page fault per 2 MiB instead of one per 4 KiB, and the page walks of a
// scan over hundreds of MB hit the TLB. Measured on a 1.1 GB trace (bench/trace_speed.sh):
// 140k page faults -> 28k, kernel time 0.95 s -> 0.4-0.65 s, user time 2.4 s -> 1.7 s.
// Every block comes from malloc or aligned_alloc and goes back with free. Sanitizer builds
// (SEXTANT_SANITIZE) keep their own allocator, which checks new/delete pairing.
#ifdef SEXTANT_HUGE_PAGE_NEW
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kLargeBlock = 2 * kHugePage;  // smaller blocks: plain malloc

void* AllocateBlock(std::size_t size) {
  if (size < kLargeBlock || size > SIZE_MAX - kHugePage) return std::malloc(size ? size : 1);
  const std::size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* block = std::aligned_alloc(kHugePage, rounded);
  if (!block) return std::malloc(size);  // the alignment's slack was too much: no huge pages
#ifdef MADV_HUGEPAGE
  ::madvise(block, rounded, MADV_HUGEPAGE);  // a hint: ignored where THP is off
#endif
  return block;
}
}  // namespace

// Not inlined, so that a tool replacing the allocator (valgrind) sees matching calls.
[[gnu::noinline]] void* operator new(std::size_t size) {
  while (true) {
    if (void* block = AllocateBlock(size)) return block;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
[[gnu::noinline]] void* operator new[](std::size_t size) { return ::operator new(size); }
// GCC assumes what reaches operator delete came from the library's operator new; here both
// are ours, and every block is malloc's.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
[[gnu::noinline]] void operator delete(void* block) noexcept { std::free(block); }
[[gnu::noinline]] void operator delete[](void* block) noexcept { std::free(block); }
[[gnu::noinline]] void operator delete(void* block, std::size_t) noexcept { std::free(block); }
[[gnu::noinline]] void operator delete[](void* block, std::size_t) noexcept { std::free(block); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

int main(int argc, char** argv) {
  CLI::App app{"Sextant: memory and performance projection, and trace analysis, for LLM training",
               "sextant"};
  app.require_subcommand(1);
  app.set_version_flag("--version", SEXTANT_VERSION);
  sextant::cli::AddProjectionCommands(app);
  sextant::cli::AddTraceCommands(app);
  sextant::cli::AddMemoryCommands(app);
  sextant::cli::AddModelsCommands(app);
  sextant::cli::AddHardwareCommands(app);
  sextant::cli::AddValidateCommand(app);
  sextant::cli::AddViewerCommands(app);
  sextant::cli::AddCalibrateCommand(app);
  sextant::cli::RefuseEmptyOutputPaths(app);
  if (const std::string hint = sextant::cli::HelpCommandHint(app, argc, argv); !hint.empty()) {
    std::fprintf(stderr, "sextant: error: %s\n", hint.c_str());
    return 1;
  }
  const std::vector<const char*> args = sextant::cli::HelpCommandAsFlag(argc, argv);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string hint =
        sextant::cli::CommandLineHint(app, static_cast<int>(args.size()), args.data());
    const std::string message = hint.empty() ? sextant::cli::ReadableParseError(app, e) : hint;
    std::fprintf(stderr, "sextant: error: %s\n", message.c_str());
    return 1;
  } catch (const sextant::UserError& e) {
    std::fprintf(stderr, "sextant: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sextant: internal error: %s\n", e.what());
    return 2;
  }
  // A report that did not reach its reader (a full disk, a closed pipe) is a failure, as in
  // coreutils: the buffered tail is only written now.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "sextant: error: writing standard output: %s\n",
                 errno != 0 ? std::strerror(errno) : "write failed");
    return 1;
  }
  return sextant::cli::ExitStatus();
}
