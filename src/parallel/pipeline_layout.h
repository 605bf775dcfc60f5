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

// A layout for `layers` decoder layers over `stages` virtual stages that do not divide them:
// the embedding and the loss each count as one layer's worth of work (Megatron-Core's
// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split), and the
// layers + 2 slots are spread as evenly as possible, the stages after the first taking the
// shortfall. 94 layers over 16 stages give "Et*5|t*6|...|t*6|t*5,L", the layout Primus ships
// for Qwen3-235B-A22B at PP8 VPP2 (examples/megatron/configs/MI355X/qwen3_235B_A22B-*.yaml).
// Empty when stages < 2 or there are fewer slots than stages.
std::string BalancedPipelineLayout(int64_t layers, int64_t stages);

// Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
// on their own (transformer_config.py; transformer_layer.py get_transformer_layer_offset,
// transformer_block.py get_num_layers_to_build): the embedding, the loss or both count as
// one layer, the layers plus those slots divide evenly over the virtual stages, and the first
// (last) stage builds one decoder layer fewer. 32 layers with the embedding over 3 stages:
// "Et*10|t*11|t*11". Empty when the slots do not divide over the stages (Megatron refuses
// that split) or no flag is set.
std::string AccountedPipelineLayout(int64_t layers, int64_t stages, bool embedding, bool loss);
// Why AccountedPipelineLayout gives no layout for `layers` over PP x VPP stages: one wording
// for the configuration's flags and the command line's virtual stages.
std::string AccountedLayoutRefusal(int64_t layers, int pp, int vpp, bool embedding, bool loss);

}  // namespace sextant
