// Jobs built from rows of corpus/validation/published_runs.csv (one measured run + metric per
// row). Every fact comes from the row's columns (corpus/validation/README.md defines them);
// what a row leaves unstated is its framework's documented default.
#pragma once

#include <optional>
#include <string>

#include "job/framework_defaults.h"
#include "job/job.h"
#include "util/csv_reader.h"

namespace sextant {

struct PublishedRun {
  std::string id;
  std::string metric_name;
  double measured = 0;
  bool moe = false;
  std::string vendor;     // "AMD" or "NVIDIA"
  std::string framework;  // canonical name of the row's training stack (framework_defaults.h)
  FlopConvention flops = FlopConvention::kMegatronCore;  // how the source counts model FLOPs
  bool reserved_memory = false;  // its memory rows are the allocator's reserved bytes
  std::optional<Job> job;        // empty when the row lacks what a projection needs
  std::string reason;            // why `job` is empty
};

PublishedRun ReadPublishedRun(const CsvTable& table, size_t row);

// Throws UserError at the second row of an id that two rows share: scores and --explain
// address rows by id, and a repeated row would count twice.
void CheckDistinctIds(const CsvTable& table);

}  // namespace sextant
