// libFuzzer target: arbitrary bytes as a user file read through util's input layer (plain,
// gzip or zstd by magic bytes), under small limits, whole (InputText) and in pieces
// (TextReader). Any input must load or be refused with a UserError naming the file; nothing
// may allocate past the limits or crash, and the pieces must be the whole text, in order.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "util/compressed_file.h"
#include "util/error.h"
#include "util/file_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("sextant_input_fuzz_" + std::to_string(::getpid()) + ".bin"))
                                      .string();
  sextant::WriteFileAtomically(path, std::string(reinterpret_cast<const char*>(data), size));
  const sextant::InputLimits limits{.max_bytes = 64 << 20};
  std::string whole;
  bool loaded = false;
  try {
    sextant::InputText text = sextant::InputText::Load(path, limits);
    whole = text.text();
    loaded = true;
    (void)sextant::ReadFile(path, 1 << 20);
  } catch (const sextant::UserError&) {
  }
  try {
    std::unique_ptr<sextant::TextReader> reader = sextant::TextReader::Open(path, limits);
    std::string pieces;
    char buffer[4099];  // an odd size: pieces end anywhere in a compressed block
    while (size_t n = reader->Read(buffer, sizeof buffer)) pieces.append(buffer, n);
    if (!loaded || pieces != whole) std::abort();  // read in pieces what the whole load refused
  } catch (const sextant::UserError&) {
    if (loaded) std::abort();  // refused in pieces what loads whole
  }
  return 0;
}
