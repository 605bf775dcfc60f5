#include "job/size_limits.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "job/config_reader.h"
#include "job/job.h"
#include "util/checked_math.h"
#include "util/error.h"

namespace sextant {
namespace {

constexpr int64_t P(int bits) { return int64_t{1} << bits; }

// 0 is allowed where the setting means "none" (no experts, no MLA low-rank query, no MTP).
constexpr std::array<std::pair<std::string_view, SizeRange>, 31> kRanges = {{
    {"seq_length", {1, P(24)}},  // 16M tokens
    {"micro_batch_size", {1, P(24)}},
    {"global_batch_size", {1, P(32)}},
    {"num_layers", {1, P(16)}},
    {"hidden_size", {1, P(20)}},
    {"ffn_hidden_size", {1, P(22)}},
    {"num_attention_heads", {1, P(16)}},
    {"num_query_groups", {1, P(16)}},
    {"kv_channels", {0, P(20)}},
    {"vocab_size", {1, P(28)}},
    {"make_vocab_size_divisible_by", {1, P(20)}},
    {"max_position_embeddings", {0, P(31)}},
    {"num_experts", {0, P(20)}},
    {"moe_router_topk", {1, P(20)}},
    {"moe_ffn_hidden_size", {1, P(22)}},
    {"moe_shared_expert_intermediate_size", {0, P(22)}},
    {"q_lora_rank", {0, P(20)}},
    {"kv_lora_rank", {0, P(20)}},
    {"qk_head_dim", {0, P(20)}},
    {"qk_pos_emb_head_dim", {0, P(20)}},
    {"v_head_dim", {0, P(20)}},
    {"mtp_num_layers", {0, P(16)}},
    {"recompute_num_layers", {0, P(16)}},
    {"decoder_first_pipeline_num_layers", {0, P(16)}},
    {"decoder_last_pipeline_num_layers", {0, P(16)}},
    {"tensor_model_parallel_size", kParallelDegreeRange},
    {"pipeline_model_parallel_size", kParallelDegreeRange},
    {"context_parallel_size", kParallelDegreeRange},
    {"expert_model_parallel_size", kParallelDegreeRange},
    {"expert_tensor_parallel_size", kParallelDegreeRange},
    {"virtual_pipeline_model_parallel_size", kParallelDegreeRange},
}};

class SizeChecker {
 public:
  explicit SizeChecker(const Provenance& provenance) : provenance_(provenance) {}

  // "micro_batch_size=4611686018427387904 (--micro-batch-size)"
  std::string Show(std::string_view canonical, int64_t value) const {
    return fmt::format("{}={}{}", provenance_.KeyOf(canonical), value,
                       provenance_.Describe(canonical));
  }

  void InRange(std::string_view canonical, int64_t value) const {
    const std::optional<SizeRange> range = SizeRangeOf(canonical);
    if (range && (value < range->min || value > range->max)) {
      ThrowUserError(fmt::format("{} is out of range: must be between {} and {}",
                                 Show(canonical, value), range->min, range->max));
    }
  }

  // The product of the named sizes must stay at or below kMaxDerivedProduct.
  void ProductBounded(std::string_view what,
                      std::initializer_list<std::pair<std::string_view, int64_t>> factors) const {
    int64_t product = 1;
    bool fits = true;
    std::string shown;
    for (const auto& [name, value] : factors) {
      if (!shown.empty()) shown += " x ";
      shown += Show(name, value);
      const std::optional<int64_t> next = CheckedMul(product, std::max<int64_t>(value, 1));
      fits = fits && next.has_value() && *next <= kMaxDerivedProduct;
      if (fits) product = *next;
    }
    if (!fits) {
      ThrowUserError(
          fmt::format("{} = {} exceeds 2^53: the sizes are too large to project", what, shown));
    }
  }

 private:
  const Provenance& provenance_;
};

}  // namespace

std::optional<SizeRange> SizeRangeOf(std::string_view canonical) {
  for (const auto& [name, range] : kRanges) {
    if (name == canonical) return range;
  }
  return std::nullopt;
}

void CheckJobSizes(const Job& job, const Provenance& provenance) {
  const SizeChecker check(provenance);
  const ModelSpec& m = job.model;
  const TrainingSettings& t = job.training;
  const ParallelPlan& p = job.parallel;
  for (const auto& [name, value] : std::initializer_list<std::pair<std::string_view, int64_t>>{
           {"seq_length", t.seq_length},
           {"micro_batch_size", t.micro_batch_size},
           {"num_layers", m.num_layers},
           {"hidden_size", m.hidden_size},
           {"ffn_hidden_size", m.ffn_hidden_size},
           {"num_attention_heads", m.num_attention_heads},
           {"num_query_groups", m.num_query_groups},
           {"kv_channels", m.kv_channels},
           {"vocab_size", m.vocab_size},
           {"num_experts", m.moe.num_experts},
           {"mtp_num_layers", m.mtp_num_layers},
           {"tensor_model_parallel_size", p.tp},
           {"pipeline_model_parallel_size", p.pp},
           {"context_parallel_size", p.cp},
           {"expert_model_parallel_size", p.ep},
           {"expert_tensor_parallel_size", p.etp},
           {"virtual_pipeline_model_parallel_size", p.vpp}}) {
    check.InRange(name, value);
  }
  // 0 is "not set yet": the builder then derives it from MBS x DP.
  if (t.global_batch_size != 0) check.InRange("global_batch_size", t.global_batch_size);
  if (m.IsMoe()) {
    check.InRange("moe_router_topk", m.moe.router_topk);
    check.InRange("moe_ffn_hidden_size", m.moe.ffn_hidden_size);
    check.InRange("moe_shared_expert_intermediate_size", m.moe.shared_expert_ffn_hidden_size);
  }
  if (m.attention == AttentionType::kMultiLatent) {
    check.InRange("q_lora_rank", m.mla.q_lora_rank);
    check.InRange("kv_lora_rank", m.mla.kv_lora_rank);
    check.InRange("qk_head_dim", m.mla.qk_head_dim);
    check.InRange("qk_pos_emb_head_dim", m.mla.qk_pos_emb_head_dim);
    check.InRange("v_head_dim", m.mla.v_head_dim);
  }

  // Tokens per step, activation elements of one micro-batch through every layer (the widest
  // tensor of a layer: hidden, FFN, routed experts' FFN, or attention heads x head width),
  // the attention score matrix when it is materialised, and the largest weight matrices.
  const int64_t gbs = std::max<int64_t>(t.global_batch_size, t.micro_batch_size);
  check.ProductBounded("tokens per step",
                       {{"global_batch_size", gbs}, {"seq_length", t.seq_length}});
  const std::pair<std::string_view, int64_t> mbs{"micro_batch_size", t.micro_batch_size};
  const std::pair<std::string_view, int64_t> seq{"seq_length", t.seq_length};
  const std::pair<std::string_view, int64_t> layers{"num_layers", m.num_layers};
  check.ProductBounded("activation elements", {mbs, seq, {"hidden_size", m.hidden_size}, layers});
  check.ProductBounded("activation elements",
                       {mbs, seq, {"ffn_hidden_size", m.ffn_hidden_size}, layers});
  check.ProductBounded("activation elements", {mbs,
                                               seq,
                                               {"num_attention_heads", m.num_attention_heads},
                                               {"kv_channels", m.kv_channels},
                                               layers});
  if (m.IsMoe()) {
    check.ProductBounded("activation elements", {mbs,
                                                 seq,
                                                 {"moe_router_topk", m.moe.router_topk},
                                                 {"moe_ffn_hidden_size", m.moe.ffn_hidden_size},
                                                 layers});
  }
  check.ProductBounded("logit elements", {mbs, seq, {"vocab_size", m.vocab_size}});
  if (!t.flash_attention) {
    check.ProductBounded("attention scores", {{"micro_batch_size", t.micro_batch_size},
                                              {"num_attention_heads", m.num_attention_heads},
                                              {"seq_length", t.seq_length},
                                              {"seq_length", t.seq_length}});
  }
  check.ProductBounded("parameters", {{"num_layers", m.num_layers},
                                      {"hidden_size", m.hidden_size},
                                      {"ffn_hidden_size", m.ffn_hidden_size},
                                      {"num_experts", m.moe.num_experts}});
  check.ProductBounded("parameters", {{"num_layers", m.num_layers},
                                      {"hidden_size", m.hidden_size},
                                      {"hidden_size", m.hidden_size}});
  check.ProductBounded("embedding parameters",
                       {{"vocab_size", m.vocab_size}, {"hidden_size", m.hidden_size}});
}

}  // namespace sextant
