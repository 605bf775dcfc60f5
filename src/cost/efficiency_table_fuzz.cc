// Fuzz target: EfficiencyTable::FromJson, the reader of the "table" of calibration files that
// users pass with --calibration. Any input must give a table or a UserError.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cost/efficiency_table.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    sextant::EfficiencyTable::FromJson(std::string_view(reinterpret_cast<const char*>(data), size),
                                       "fuzz.json");
  } catch (const sextant::UserError&) {
  }
  return 0;
}
