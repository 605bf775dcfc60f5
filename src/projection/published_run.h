// Jobs built from rows of corpus/validation/published_runs.csv (one measured run + metric per
// row), following each source's conventions (corpus/validation/README.md).
#pragma once

#include <optional>
#include <string>

#include "job/job.h"
#include "util/csv_reader.h"

namespace sextant {

struct PublishedRun {
  std::string id;
  std::string source_key;  // id prefix naming the source: "torchtitan", "vtrain", ...
  std::string metric_name;
  double measured = 0;
  bool moe = false;
  std::string vendor;      // "AMD" or "NVIDIA"
  std::string framework;   // "megatron", "torchtitan", "llmfoundry", "nemo", "primus"
  std::optional<Job> job;  // empty when the row lacks what a projection needs
  std::string reason;      // why `job` is empty
};

PublishedRun ReadPublishedRun(const CsvTable& table, size_t row);

}  // namespace sextant
