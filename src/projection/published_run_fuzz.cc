// Fuzz target: the published-runs table `sextant validate` reads (a user may hand over their
// own measured runs): the CSV parse, the id check and every row's conversion into a job. Any
// input must give jobs, per-row reasons or a UserError.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "projection/published_run.h"
#include "util/csv_reader.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const sextant::CsvTable table = sextant::CsvTable::Parse(text, "fuzz.csv");
    sextant::CheckDistinctIds(table);
    for (size_t row = 0; row < table.size(); ++row) {
      try {
        sextant::ReadPublishedRun(table, row);
      } catch (const sextant::UserError&) {
      }
    }
  } catch (const sextant::UserError&) {
  }
  return 0;
}
