// The sextant program: parses the command line and runs one command.
// Exit status: 0 success, 1 user error (message on stderr), 2 internal error.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include <CLI/CLI.hpp>

#include "cli/command_hints.h"
#include "cli/commands.h"
#include "util/error.h"

// The program's memory policy. Large blocks (event stores of million-event traces, sort
// buffers) are placed on 2 MiB-aligned ranges marked for transparent huge pages: first touch
// then costs one page fault per 2 MiB instead of one per 4 KiB, and the page walks of a
// scan over hundreds of MB hit the TLB. Measured on a 1.1 GB trace (bench/trace_speed.sh):
// 140k page faults -> 28k, kernel time 0.95 s -> 0.4-0.65 s, user time 2.4 s -> 1.7 s.
// Blocks come from aligned_alloc, so the library's operator delete (free) releases them.
// Sanitizer builds keep their own allocator, which checks new/delete pairing.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__has_feature)
#define SEXTANT_HUGE_PAGE_NEW 1
#elif defined(__has_feature)
#if !__has_feature(address_sanitizer)
#define SEXTANT_HUGE_PAGE_NEW 1
#endif
#endif
#ifdef SEXTANT_HUGE_PAGE_NEW
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kLargeBlock = 2 * kHugePage;  // smaller blocks: plain malloc

void* AllocateBlock(std::size_t size) {
  if (size < kLargeBlock) return std::malloc(size ? size : 1);
  const std::size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* block = std::aligned_alloc(kHugePage, rounded);
#ifdef MADV_HUGEPAGE
  if (block) ::madvise(block, rounded, MADV_HUGEPAGE);  // a hint: ignored where THP is off
#endif
  return block;
}
}  // namespace

void* operator new(std::size_t size) {
  while (true) {
    if (void* block = AllocateBlock(size)) return block;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
void* operator new[](std::size_t size) { return ::operator new(size); }
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string hint = sextant::cli::CommandLineHint(app, argc, argv);
    std::fprintf(stderr, "sextant: error: %s\n", hint.empty() ? e.what() : hint.c_str());
    return 1;
  } catch (const sextant::UserError& e) {
    std::fprintf(stderr, "sextant: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sextant: internal error: %s\n", e.what());
    return 2;
  }
  return sextant::cli::ExitStatus();
}
