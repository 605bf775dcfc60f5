// Megatron's --pipeline-model-parallel-layout strings, e.g. "Et*3|(tt|)*29,m|L":
// stages separated by '|', listed in virtual-stage order (all PP ranks of chunk 0, then of
// chunk 1, ...); E = embedding, t = decoder layer, m = MTP layer, L = loss/output;
// "x*N" repeats one symbol, "(...)*N" repeats a group, ',' is cosmetic, empty stages allowed.
// Source: Megatron-Core user guide, "Custom Pipeline Model Parallel Layout".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sextant {

struct LayoutStage {
  int64_t decoder_layers = 0;
  int64_t mtp_layers = 0;
  bool embedding = false;
  bool loss = false;
};

// Throws UserError (naming the layout key and the character offset) on a malformed string.
std::vector<LayoutStage> ParsePipelineLayout(const std::string& layout);

}  // namespace sextant
