// libFuzzer target: arbitrary bytes as a user file read through util's input layer (plain,
// gzip or zstd by magic bytes), under small limits. Any input must load or be refused with a
// UserError naming the file; nothing may allocate past the limits or crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "util/compressed_file.h"
#include "util/error.h"
#include "util/file_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("sextant_input_fuzz_" + std::to_string(::getpid()) + ".bin"))
                                      .string();
  sextant::WriteFileAtomically(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    sextant::InputText text = sextant::InputText::Load(path, {.max_bytes = 64 << 20});
    (void)text.text();
    (void)sextant::ReadFile(path, 1 << 20);
  } catch (const sextant::UserError&) {
  }
  return 0;
}
