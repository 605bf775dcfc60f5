// The rank a Kineto trace records (its top-level "distributedInfo"), read from the head of the
// file without parsing the events: enough to tell whether the traces of a folder are the ranks
// of one run before any of them is analysed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

struct DistributedInfo {
  int64_t rank = -1;
  int64_t world_size = -1;  // -1 when not recorded
};

// The "distributedInfo" object of a trace's text, looked for before its "traceEvents" (where
// Kineto writes it) within the first `max_bytes` of text. nullopt when it is not there, has
// no integer "rank", or the text cannot be read: the caller then knows nothing of the rank.
std::optional<DistributedInfo> FindDistributedInfo(std::string_view head);
std::optional<DistributedInfo> PeekDistributedInfo(const std::string& path,
                                                   size_t max_bytes = size_t{4} << 20);

// Whether `files` are the rank traces of one run: at least two, each recording its rank
// (PeekDistributedInfo), no rank twice, and one world size of at least two. Traces without
// distributedInfo are not taken for ranks: five runs of one worker look alike by name.
bool AreRanksOfOneRun(const std::vector<std::string>& files);

}  // namespace sextant
