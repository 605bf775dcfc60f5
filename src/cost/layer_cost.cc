#include "cost/layer_cost.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "job/framework_defaults.h"
#include "job/lora_adapter.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant {

namespace {

// Megatron's recompute_modules (megatron/core/transformer/transformer_config.py) as bits, so
// that one kernel can belong to several (the MoE activation is both "moe" and "moe_act").
enum Module : unsigned {
  kLayernorm = 1u << 0,
  kCoreAttn = 1u << 1,
  kMlaUpProj = 1u << 2,
  kMlp = 1u << 3,
  kMoe = 1u << 4,
  kMoeAct = 1u << 5,
  kSharedExperts = 1u << 6,
  kAttnProj = 1u << 7,  // not selectively recomputable: QKV/O projections, rotary
  kOther = 1u << 8,     // residual adds, dropout, embedding, head
};

unsigned ModuleBit(const std::string& name) {
  if (name == "core_attn") return kCoreAttn;
  if (name == "layernorm") return kLayernorm;
  if (name == "mla_up_proj") return kMlaUpProj;
  if (name == "mlp") return kMlp;
  if (name == "moe") return kMoe;
  if (name == "moe_act") return kMoeAct;
  if (name == "shared_experts") return kSharedExperts;
  ThrowUserError(SourceLocation{}, "recompute_modules",
                 fmt::format("unknown module '{}' (expected core_attn, layernorm, mla_up_proj, "
                             "mlp, moe, moe_act, shared_experts)",
                             name));
}

unsigned SelectiveMask(const RecomputeSpec& spec) {
  if (spec.matmul_outputs_only) {
    // MaxText's named-projection policies: attention re-runs unless its context is saved
    // (flash attention's backward needs Q, K, V, the output and its log-sum-exp, all kept),
    // and the "..._except_mlp" ones re-run the MLP or MoE block.
    unsigned mask = spec.save_attention_context ? 0u : kCoreAttn;
    if (!spec.save_mlp_outputs) mask |= kMlp | kMoe;
    // Q, K, V not saved: their projections re-run (with the output projection: one module
    // bit holds them all, so save_out_proj's saved output is re-run too).
    if (!spec.save_qkv_projections) mask |= kAttnProj;
    return mask;
  }
  if (spec.modules.empty()) return kCoreAttn;  // Megatron's default selective recompute
  unsigned mask = 0;
  for (const std::string& m : spec.modules) mask |= ModuleBit(m);
  return mask;
}

double ActivationBytes(const PrecisionRecipe& p) { return DTypeBytes(p.ActivationDType()); }

// Balanced routing: `tokens` copies spread over `experts` as evenly as integers allow.
std::vector<int64_t> SplitTokens(int64_t tokens, int64_t experts) {
  std::vector<int64_t> out(std::max<int64_t>(1, experts), tokens / std::max<int64_t>(1, experts));
  const int64_t rest = tokens - out[0] * static_cast<int64_t>(out.size());
  for (int64_t i = 0; i < rest; ++i) out[i] += 1;
  return out;
}

}  // namespace

CostParts& CostParts::operator+=(const CostParts& o) {
  gemm += o.gemm;
  attention += o.attention;
  memory_bound += o.memory_bound;
  tp_comm += o.tp_comm;
  cp_comm += o.cp_comm;
  ep_comm += o.ep_comm;
  return *this;
}

// Collects the kernels of one layer. Forward work is kept item by item with its module bits
// so that selective recompute can re-run exactly the chosen modules.
class LayerCostModel::Builder {
 public:
  Builder(const LayerCostModel& model, std::string kind) : m_(model) {
    cost_.kind = std::move(kind);
  }

  // y[T, out] = x[T, in] · W[in, out]: forward GEMM (T, out, in); input gradient
  // dX = dY · Wᵀ (T, in, out) in B; weight gradient dW = Xᵀ · dY (in, out, T) in W.
  // `module`: Megatron's name for the layer (linear_qkv, linear_fc1, ...), which LoRA targets.
  // Under LoRA the weight is frozen: no weight gradient, nothing to accumulate.
  void Linear(unsigned tags, int64_t tokens, int64_t in, int64_t out, DType dtype,
              std::string_view module = {}) {
    if (tokens <= 0 || in <= 0 || out <= 0) return;
    const GemmEstimate f = m_.gemm_.Estimate({tokens, out, in}, dtype);
    const GemmEstimate b = m_.gemm_.Estimate({tokens, in, out}, dtype, GemmPass::kGradient);
    AddForward(
        tags, [&](CostParts& p) { p.gemm += f.seconds; }, f.flops);
    cost_.backward_input.gemm += b.seconds;
    cost_.flops_backward += b.flops;
    LowPrecisionCasts(tags, tokens, in, out, dtype);
    if (!Frozen()) {
      const GemmEstimate w = m_.gemm_.Estimate({in, out, tokens}, dtype, GemmPass::kGradient);
      cost_.backward_weight.gemm += w.seconds;
      cost_.flops_backward += w.flops;
      GradientAccumulation(in * out);
    }
    if (Lora().Targets(module)) Adapter(tags, tokens, in, out, module, m_.job_.parallel.tp, false);
  }

  // A LoRA adapter beside a frozen linear whose per-GPU widths are in -> out:
  // y += alpha/r · B(A(dropout(x))), A and B 16-bit tensor-parallel linears split over
  // `shards` ranks as job/lora_adapter.h describes. Backward takes the input gradient through B
  // and A and adds it to the base layer's, then the weight gradients of A and B. Beside a
  // tensor-parallel layer the adapter also exchanges whole activations (ParallelLinearAdapter):
  //   column-parallel: A's input-gradient all-reduce in backward, or with SP the gather of the
  //     sequence (reduce-scatter in backward) the base layer does inside its own kernel;
  //   row-parallel: B gathers the full output (and with SP, the scatter back to the sequence
  //     shard gathers again in backward);
  //   replicated: B gathers the output, A's input gradient is all-reduced without SP.
  // The r-wide exchanges are negligible and not charged; expert-TP exchanges are not modelled.
  void Adapter(unsigned tags, int64_t tokens, int64_t in, int64_t out, std::string_view module,
               int64_t shards, bool expert) {
    const LoraSpec& l = Lora();
    const int64_t r = l.rank;
    const TpSplit split = LoraTpSplit(module);
    const int64_t s = std::max<int64_t>(1, shards);
    const DType half = m_.job_.training.precision.HalfPrecision();
    const double b = DTypeBytes(half);
    if (l.dropout > 0 && l.dropout_before) MemoryBound(tags, DropoutBytes(tokens, in, b));
    // A: tokens x in -> r (its r outputs split over the ranks unless the layer is row-parallel);
    // B: r -> out (the GPU's share of the output unless the layer is column-parallel).
    const int64_t a_out = split == TpSplit::kRow ? r : CeilDiv(r, s);
    const int64_t b_out = split == TpSplit::kColumn ? out : CeilDiv(out, s);
    const double x_bytes = static_cast<double>(tokens) * in * b;
    const double y_bytes = static_cast<double>(tokens) * b_out * b;
    const double side = static_cast<double>(r) * (tokens + in + out) * b;
    const double fa = AdapterGemm({tokens, a_out, in}, x_bytes + side, GemmPass::kForward);
    const double fb = AdapterGemm({tokens, b_out, r}, y_bytes + side, GemmPass::kForward);
    const double bb = AdapterGemm({tokens, r, b_out}, y_bytes + side, GemmPass::kGradient);
    const double ba = AdapterGemm({tokens, in, a_out}, x_bytes + side, GemmPass::kGradient);
    const double wa = AdapterGemm({in, a_out, tokens}, x_bytes + side, GemmPass::kGradient);
    const double wb = AdapterGemm({r, b_out, tokens}, y_bytes + side, GemmPass::kGradient);
    const int64_t params = LoraAdapterParamsOf(r, in, out, split, s);
    const double flops = 2.0 * static_cast<double>(tokens) * params;
    AddForward(
        tags, [&](CostParts& p) { p.gemm += fa + fb; }, flops);
    cost_.backward_input.gemm += ba + bb;
    cost_.backward_weight.gemm += wa + wb;
    cost_.flops_backward += 2 * flops;
    // Forward: the alpha/r scale and the add to the base output; backward: the add of the two
    // input gradients.
    const OpBytes scale = GeluBytes(tokens, out, b);
    MemoryBound(tags, {scale.forward + ResidualAddBytes(tokens, out, b).forward,
                       ResidualAddBytes(tokens, in, b).backward});
    GradientAccumulation(params);
    cost_.lora_params += params;
    if (s <= 1 || expert) return;
    const bool sp = m_.job_.parallel.sequence_parallel;
    const int64_t input = static_cast<int64_t>(x_bytes);
    const int64_t output = static_cast<int64_t>(static_cast<double>(tokens) * out * b);
    const std::string name = fmt::format("LoRA {}", module);
    if (split == TpSplit::kColumn || split == TpSplit::kReplicated) {
      if (sp) {
        Comm(tags, name + " input all-gather", Collective::kAllGather, Collective::kReduceScatter,
             ParallelDim::kTP, input);
      } else {
        Comm(tags, name + " input-gradient all-reduce", Collective::kAllReduce,
             Collective::kAllReduce, ParallelDim::kTP, input, /*forward=*/false);
      }
    }
    if (split == TpSplit::kRow || split == TpSplit::kReplicated) {
      Comm(tags, name + " output all-gather", Collective::kAllGather, Collective::kAllGather,
           ParallelDim::kTP, output, /*forward=*/true,
           /*backward=*/split == TpSplit::kRow && sp);
    }
  }

  // A rank-r GEMM does about r FLOPs per byte it streams (Hu et al. 2021's adapters have r of
  // 4 to 64), far below every GPU's ridge point (peak FLOP/s / HBM bytes/s: ~150 on an A100, ~300
  // on an H100, MI355X or B200): it runs at HBM speed, which the memory-bound model times. The tile
  // model would charge it a main loop's efficiency ramp it never reaches. Above the ridge it is an
  // ordinary GEMM.
  double AdapterGemm(const GemmShape& shape, double bytes, GemmPass pass) {
    const DType half = m_.job_.training.precision.HalfPrecision();
    const GpuSpec& gpu = m_.job_.cluster.gpu;
    const double flops = 2.0 * shape.m * shape.n * shape.k;
    const double ridge = gpu.PeakTflops(half) * 1e12 / gpu.hbm_bandwidth;
    if (flops / bytes < ridge) return m_.memory_bound_.Time(bytes);
    return m_.gemm_.Estimate(shape, half, pass).seconds;
  }

  // The same for the experts' GEMMs, experts holding `group_tokens` tokens each, launched as
  // the stack launches them (one grouped kernel, or one GEMM per expert over TE's streams or
  // one after the other).
  void GroupedLinear(unsigned tags, const std::vector<int64_t>& group_tokens, int64_t in,
                     int64_t out, DType dtype, std::string_view module = {}) {
    const ExpertGemmLaunch launch = m_.job_.training.expert_gemm_launch;
    const GemmModel& gemm = m_.gemm_;
    GemmEstimate f, b, w;
    if (launch == ExpertGemmLaunch::kGroupedKernel) {
      f = gemm.EstimateGrouped(group_tokens, out, in, dtype);
      b = gemm.EstimateGrouped(group_tokens, in, out, dtype, GemmPass::kGradient);
      w = gemm.EstimateGroupedRaggedK(in, out, group_tokens, dtype, GemmPass::kGradient);
    } else {
      const int streams = launch == ExpertGemmLaunch::kSequentialLoop ? 1 : kExpertGemmStreams;
      f = gemm.EstimateGroupLoop(group_tokens, out, in, dtype, GemmPass::kForward, streams);
      b = gemm.EstimateGroupLoop(group_tokens, in, out, dtype, GemmPass::kGradient, streams);
      w = gemm.EstimateGroupLoopRaggedK(in, out, group_tokens, dtype, GemmPass::kGradient, streams);
    }
    AddForward(
        tags, [&](CostParts& p) { p.gemm += f.seconds; }, f.flops);
    cost_.backward_input.gemm += b.seconds;
    cost_.flops_backward += b.flops;
    int64_t tokens = 0;
    for (int64_t t : group_tokens) tokens += t;
    LowPrecisionCasts(tags, tokens, in, out, dtype);
    if (!Frozen()) {
      cost_.backward_weight.gemm += w.seconds;
      cost_.flops_backward += w.flops;
      GradientAccumulation(static_cast<int64_t>(group_tokens.size()) * in * out,
                           launch == ExpertGemmLaunch::kGroupedGemmPackage);
    }
    // One adapter serves all local experts, over all the tokens they received.
    if (Lora().Targets(module)) Adapter(tags, tokens, in, out, module, m_.job_.parallel.etp, true);
  }

  // Without gradient-accumulation fusion every weight's micro-batch gradient is added to its
  // main gradient by a separate kernel after the weight-gradient GEMM. FSDP2 has no main_grad
  // buffer (the option must be off there): each micro-batch's gradient is reduce-scattered and
  // only the shard accumulates, which the data-parallel model's reduce-scatter already covers.
  // `always_unfused`: weights whose gradients autograd returns (the grouped_gemm package's).
  const LoraSpec& Lora() const { return m_.job_.training.lora; }
  // LoRA freezes every base weight: their weight gradients are never computed.
  bool Frozen() const { return Lora().enabled; }

  void GradientAccumulation(int64_t weights, bool always_unfused = false) {
    const TrainingSettings& t = m_.job_.training;
    if ((t.gradient_accumulation_fusion && !always_unfused) || m_.job_.parallel.fsdp2) return;
    WeightGradMemoryBound(UnfusedGradAccumulationBytes(
        weights, DTypeBytes(t.precision.HalfPrecision()), DTypeBytes(t.precision.main_grads)));
  }

  // A matmul of an activation with a constant (a routing mask): its forward GEMM and, in
  // backward, only the activation's gradient (nothing to train in the mask).
  // `mask_gradient`, when the mask carries trainable weights (MaxText's combine mask holds the
  // router weights), is the GEMM of the mask's own gradient.
  void MaskMatmul(unsigned tags, const GemmShape& forward, const GemmShape& backward, DType dtype,
                  const GemmShape* mask_gradient = nullptr) {
    const GemmEstimate f = m_.gemm_.Estimate(forward, dtype);
    const GemmEstimate b = m_.gemm_.Estimate(backward, dtype, GemmPass::kGradient);
    AddForward(
        tags, [&](CostParts& p) { p.gemm += f.seconds; }, f.flops);
    cost_.backward_input.gemm += b.seconds;
    cost_.flops_backward += b.flops;
    if (mask_gradient) {
      const GemmEstimate g = m_.gemm_.Estimate(*mask_gradient, dtype, GemmPass::kGradient);
      cost_.backward_input.gemm += g.seconds;
      cost_.flops_backward += g.flops;
    }
  }

  // FP8 / MX / FP4 GEMM inputs are cast (and transposed) from bf16 first.
  void LowPrecisionCasts(unsigned tags, int64_t tokens, int64_t in, int64_t out, DType dtype) {
    if (dtype != DType::kFP8 && dtype != DType::kMXFP8 && dtype != DType::kFP4) return;
    MemoryBound(tags, LowPrecisionCastBytes(tokens, in, out, 2.0, DTypeBytes(dtype)));
    if (m_.job_.training.precision.fp8_current_scaling) {
      MemoryBound(tags, AmaxBytes(tokens, in, out, 2.0));
    }
  }

  // Returns forward and backward seconds (for the CP ring overlap).
  std::pair<double, double> Attention(unsigned tags, const AttentionShape& shape) {
    const DType half = m_.job_.training.precision.HalfPrecision();
    const AttentionEstimate f = m_.attention_.Forward(shape, half);
    const AttentionEstimate b = m_.attention_.Backward(shape, half);
    AddForward(
        tags, [&](CostParts& p) { p.attention += f.seconds; }, f.flops);
    cost_.backward_input.attention += b.seconds;
    cost_.flops_backward += b.flops;
    return {f.seconds, b.seconds};
  }

  void MemoryBound(unsigned tags, OpBytes bytes) {
    const double f = m_.memory_bound_.Time(bytes.forward);
    AddForward(tags, [&](CostParts& p) { p.memory_bound += f; });
    cost_.backward_input.memory_bound += m_.memory_bound_.Time(bytes.backward);
  }

  // Atomic accumulations (scatter_add_ / index_add_) of `forward` elements in the forward pass
  // and `backward` in the backward (input-gradient) pass.
  void AtomicAdds(unsigned tags, double forward, AtomicAdd forward_op, double backward,
                  AtomicAdd backward_op) {
    const double f = m_.memory_bound_.AtomicAddTime(forward, forward_op);
    AddForward(tags, [&](CostParts& p) { p.memory_bound += f; });
    cost_.backward_input.memory_bound += m_.memory_bound_.AtomicAddTime(backward, backward_op);
  }

  // A weight-gradient-only memory-bound kernel (embedding gradient scatter).
  void WeightGradMemoryBound(double bytes) {
    cost_.backward_weight.memory_bound += m_.memory_bound_.Time(bytes);
  }

  // A collective in the forward pass and its conjugate in the backward (input-gradient) pass.
  void Comm(unsigned tags, const std::string& what, Collective forward_op, Collective backward_op,
            ParallelDim dim, int64_t bytes, bool forward = true, bool backward = true) {
    const CommGroup group = GroupFor(dim, m_.job_.parallel, m_.job_.cluster.gpus_per_node);
    if (group.size <= 1 || bytes <= 0) return;
    if (forward) {
      const double s = Time(forward_op, bytes, group);
      cost_.comms.push_back({what, Pass::kForward, forward_op, dim, bytes, 1, s});
      AddForward(tags, [&](CostParts& p) { Category(p, dim) += s; });
    }
    if (backward) {
      const double s = Time(backward_op, bytes, group);
      cost_.comms.push_back({what, Pass::kBackwardInput, backward_op, dim, bytes, 1, s});
      Category(cost_.backward_input, dim) += s;
    }
  }

  // Ring attention (Megatron / TE context parallelism): cp-1 steps, each sending this rank's
  // K/V chunk to the next rank while the attention of the current chunk runs. The backward
  // pass circulates K/V and their gradients (twice the bytes). Only the part of each step's
  // transfer longer than that step's attention (1/cp of the total) is exposed.
  void RingExchange(unsigned tags, int64_t kv_chunk_bytes, double attention_forward,
                    double attention_backward) {
    const int cp = m_.job_.parallel.cp;
    const CommGroup group =
        GroupFor(ParallelDim::kCP, m_.job_.parallel, m_.job_.cluster.gpus_per_node);
    if (cp <= 1 || group.size <= 1) return;
    const double f = Time(Collective::kSendRecv, kv_chunk_bytes, group);
    const double b = Time(Collective::kSendRecv, 2 * kv_chunk_bytes, group);
    cost_.comms.push_back({"CP ring K/V exchange", Pass::kForward, Collective::kSendRecv,
                           ParallelDim::kCP, kv_chunk_bytes, cp - 1, f});
    cost_.comms.push_back({"CP ring K/V + dK/dV exchange", Pass::kBackwardInput,
                           Collective::kSendRecv, ParallelDim::kCP, 2 * kv_chunk_bytes, cp - 1, b});
    const double exposed_f = (cp - 1) * std::max(0.0, f - attention_forward / cp);
    const double exposed_b = (cp - 1) * std::max(0.0, b - attention_backward / cp);
    AddForward(tags, [&](CostParts& p) { p.cp_comm += exposed_f; });
    cost_.backward_input.cp_comm += exposed_b;
    cost_.hidden_comm_forward += (cp - 1) * f - exposed_f;
    cost_.hidden_comm_backward += (cp - 1) * b - exposed_b;
  }

  // Megatron's combined 1F1B cuts an MoE layer at its all-to-alls: called once the dispatch
  // side (all-to-all, expert-TP gather) is issued, and once the combine all-to-all is.
  void MarkDispatched() { dispatched_ = Now(); }
  void MarkCombined() {
    combined_ = Now();
    cut_ = true;
  }

  // How the layer's EP all-to-all is hidden, if at all.
  struct EpOverlap {
    bool deepep = false;           // Primus's model: a fraction of it (deepep_efficiency)
    double deepep_efficiency = 0;  //
    bool combined_1f1b = false;    // Megatron's schedule, stage by stage (MoeLayerPhases)
    bool delay_wgrad = false;      // delay_wgrad_compute
    double paired_share = 1;       // CombinedOneFOneBPairedShare
  };

  LayerCost Finish(unsigned recompute_mask, const EpOverlap* overlap = nullptr) {
    const EpOverlap ep = overlap ? *overlap : EpOverlap();
    for (const Item& item : items_) cost_.forward += item.parts;
    double forward_ep_scale = 1.0;
    double hide_f = 0, hide_b = 0;
    if (ep.combined_1f1b && cut_) {
      const double hidden = ep.paired_share * CombinedOneFOneBHiddenComm(Phases(), ep.delay_wgrad);
      const double raw_f = cost_.forward.ep_comm, raw_b = cost_.backward_input.ep_comm;
      if (raw_f + raw_b > 0) {
        hide_f = hidden * raw_f / (raw_f + raw_b);
        hide_b = hidden - hide_f;
      }
    } else if (ep.deepep) {
      // DeepEP hides a fixed fraction of the all-to-all, at most the compute it runs beside
      // (Primus's exposed = a2a - min(a2a·eff, compute), §3.3.6).
      hide_f = std::min(ep.deepep_efficiency * cost_.forward.ep_comm, cost_.forward.Compute());
      hide_b = std::min(ep.deepep_efficiency * cost_.backward_input.ep_comm,
                        cost_.backward_input.Compute() + cost_.backward_weight.Compute());
    }
    if (cost_.forward.ep_comm > 0) {
      forward_ep_scale = (cost_.forward.ep_comm - hide_f) / cost_.forward.ep_comm;
    }
    cost_.forward.ep_comm -= hide_f;
    cost_.hidden_comm_forward += hide_f;
    cost_.backward_input.ep_comm -= hide_b;
    cost_.hidden_comm_backward += hide_b;
    for (const Item& item : items_) {
      if (item.tags & recompute_mask) {
        CostParts p = item.parts;
        p.ep_comm *= forward_ep_scale;
        cost_.recompute += p;
        cost_.flops_recompute += item.flops;
      }
    }
    return cost_;
  }

 private:
  struct Item {
    unsigned tags;
    CostParts parts;
    double flops = 0;  // GEMM and attention FLOPs of this forward piece
  };

  // Running sums of computation and EP communication, by pass.
  struct Totals {
    double forward = 0, backward_input = 0, backward_weight = 0;
    double forward_ep = 0, backward_ep = 0;
  };
  Totals Now() const {
    Totals t;
    for (const Item& item : items_) {
      t.forward += item.parts.Compute();
      t.forward_ep += item.parts.ep_comm;
    }
    t.backward_input = cost_.backward_input.Compute();
    t.backward_weight = cost_.backward_weight.Compute();
    t.backward_ep = cost_.backward_input.ep_comm;
    return t;
  }
  MoeLayerPhases Phases() const {
    const Totals end = Now();
    const Totals& d = dispatched_;
    const Totals& c = combined_;
    MoeLayerPhases p;
    p.forward_pre = d.forward;
    p.forward_experts = c.forward - d.forward;
    p.forward_post = end.forward - c.forward;
    p.backward_pre = d.backward_input + d.backward_weight;
    p.backward_experts_input = c.backward_input - d.backward_input;
    p.backward_experts_weight = c.backward_weight - d.backward_weight;
    p.backward_post =
        end.backward_input - c.backward_input + end.backward_weight - c.backward_weight;
    p.dispatch_forward = d.forward_ep;
    p.combine_forward = c.forward_ep - d.forward_ep;
    p.dispatch_backward = d.backward_ep;
    p.combine_backward = c.backward_ep - d.backward_ep;
    return p;
  }
  Totals dispatched_, combined_;
  bool cut_ = false;

  template <typename F>
  void AddForward(unsigned tags, F&& add, double flops = 0) {
    Item item{tags, {}, flops};
    add(item.parts);
    items_.push_back(item);
    cost_.flops_forward += flops;
  }

  static double& Category(CostParts& p, ParallelDim dim) {
    switch (dim) {
      case ParallelDim::kTP: return p.tp_comm;
      case ParallelDim::kCP: return p.cp_comm;
      case ParallelDim::kEP:
      case ParallelDim::kETP: return p.ep_comm;
      default: return p.tp_comm;
    }
  }

  double Time(Collective op, int64_t bytes, const CommGroup& group) const {
    return m_.collectives_ ? m_.collectives_->Time(op, bytes, group) : 0.0;
  }

  const LayerCostModel& m_;
  LayerCost cost_;
  std::vector<Item> items_;
};

int64_t MaxTextExpertCapacity(int64_t sequence, int64_t topk, int64_t experts,
                              double capacity_factor) {
  if (sequence <= 0 || topk <= 0 || experts <= 0 || !(capacity_factor > 0)) return 0;
  // Readers bound the factor (kMaxCapacityFactor); beyond it the count would not fit int64.
  capacity_factor = std::min(capacity_factor, kMaxCapacityFactor);
  const double per_expert = std::ceil(static_cast<double>(sequence * topk) / experts);
  return static_cast<int64_t>(std::max(per_expert * capacity_factor, capacity_factor));
}

double CombinedOneFOneBHiddenComm(const MoeLayerPhases& p, bool delay_wgrad_compute) {
  // Stage 1: the previous combine's backward (its all-to-all after the unpermutation and
  // residual gradients, on the communication stream) beside the pre-dispatch forward.
  const double first = std::max(p.backward_post + p.combine_backward, p.forward_pre);
  // Stage 2: dispatch forward, then dispatch backward once the experts' input gradient is
  // ready; on the compute stream the experts' backward (weight gradients too unless delayed),
  // the delayed weight gradients, then the experts' forward once its tokens have arrived.
  const double experts_backward =
      p.backward_experts_input + (delay_wgrad_compute ? 0.0 : p.backward_experts_weight);
  const double delayed = delay_wgrad_compute ? p.backward_experts_weight : 0.0;
  const double comm_end = std::max(p.dispatch_forward, experts_backward) + p.dispatch_backward;
  const double compute_end =
      std::max(experts_backward + delayed, p.dispatch_forward) + p.forward_experts;
  const double second = std::max(comm_end, compute_end);
  // Stage 3: the combine forward (all-to-all, then unpermutation and residual) beside the
  // pre-dispatch backward.
  const double third = std::max(p.combine_forward + p.forward_post, p.backward_pre);
  const double comm =
      p.dispatch_forward + p.combine_forward + p.dispatch_backward + p.combine_backward;
  const double one_after_the_other = p.forward_pre + p.forward_experts + p.forward_post +
                                     p.backward_pre + p.backward_experts_input +
                                     p.backward_experts_weight + p.backward_post + comm;
  return std::clamp(one_after_the_other - (first + second + third), 0.0, comm);
}

double CombinedOneFOneBPairedShare(int64_t micro_batches, int pp, int vpp) {
  if (micro_batches <= 0) return 0;
  const int64_t passes = micro_batches * std::max(1, vpp);
  int64_t warmup = 0;
  if (pp <= 1) {
    warmup = 0;
  } else if (vpp > 1) {
    warmup = int64_t{2} * (pp - 1) + int64_t{vpp - 1} * pp;
  } else {
    warmup = pp - 1;
  }
  warmup += 1;  // the schedule's extra forward that frees a backward to pair with
  return static_cast<double>(std::max<int64_t>(0, passes - warmup)) / static_cast<double>(passes);
}

namespace {

// C(n - r, k) / C(n, k): the chance that k items drawn from n miss r given ones.
double MissAll(double n, double r, int64_t k) {
  double p = 1.0;
  for (int64_t i = 0; i < k && p > 0; ++i) p *= std::max(0.0, (n - r - i) / (n - i));
  return p;
}

// C(a, b) as a double (small arguments: groups).
double Choose(int64_t a, int64_t b) {
  if (b < 0 || b > a) return 0;
  double c = 1;
  for (int64_t i = 0; i < b; ++i) c = c * static_cast<double>(a - i) / static_cast<double>(i + 1);
  return c;
}

}  // namespace

double DeepEpNetworkShare(int64_t experts, int64_t topk, const CommGroup& ep_group, int64_t groups,
                          int64_t group_topk) {
  const int nodes = ep_group.Nodes();
  if (nodes <= 1 || experts <= 0 || topk <= 0 || ep_group.size <= ep_group.ranks_per_node) {
    return 1.0;
  }
  const double per_node = static_cast<double>(experts) / nodes;
  // P(no expert of a given node among the k)
  double miss = MissAll(static_cast<double>(experts), per_node, topk);
  const bool nested = groups > 1 && experts % groups == 0 && group_topk > 0 &&
                      group_topk < groups && (groups % nodes == 0 || nodes % groups == 0);
  if (nested) {
    // The node meets m groups with x of its experts in each; j of those m are chosen with the
    // hypergeometric chance, and then the k experts, drawn among the chosen groups' g·s,
    // must miss the node's j·x.
    const double s = static_cast<double>(experts) / groups;
    const int64_t m = groups % nodes == 0 ? groups / nodes : 1;
    const double x = per_node / static_cast<double>(m);
    const double pool = static_cast<double>(group_topk) * s;
    miss = 0;
    for (int64_t j = 0; j <= std::min(m, group_topk); ++j) {
      const double chosen =
          Choose(m, j) * Choose(groups - m, group_topk - j) / Choose(groups, group_topk);
      miss += chosen * MissAll(pool, static_cast<double>(j) * x, topk);
    }
  }
  const double remote_nodes = (nodes - 1) * (1.0 - miss);
  const double remote_copies =
      static_cast<double>(topk) * (ep_group.size - ep_group.ranks_per_node) / ep_group.size;
  return std::min(1.0, remote_nodes / remote_copies);
}

LayerCostModel::LayerCostModel(const Job& job, const EfficiencyTable& table,
                               const CollectiveModel* collectives, LayerCostOptions options)
    : job_(job),
      table_(table),
      collectives_(collectives),
      options_(options),
      gemm_(job.cluster.gpu, table),
      attention_(job.cluster.gpu, table),
      memory_bound_(job.cluster.gpu, table) {
  const ModelSpec& m = job_.model;
  const ParallelPlan& p = job_.parallel;
  const TrainingSettings& t = job_.training;
  if (m.hidden_size <= 0 || m.num_attention_heads <= 0 || m.num_layers <= 0) {
    ThrowUserError(
        fmt::format("model {}: hidden_size, num_attention_heads and num_layers must "
                    "be positive for the cost model",
                    m.name));
  }
  if (p.tp < 1 || p.cp < 1 || p.ep < 1 || p.etp < 1) {
    ThrowUserError("parallel sizes (TP, CP, EP, ETP) must be at least 1");
  }
  if (t.seq_length <= 0 || t.micro_batch_size <= 0) {
    ThrowUserError("seq_length and micro_batch_size must be positive");
  }
  if (t.seq_length % p.cp != 0) {
    ThrowUserError(SourceLocation{}, "context_parallel_size",
                   fmt::format("CP {} does not divide seq_length {}", p.cp, t.seq_length));
  }
  if (m.IsMoe() && m.moe.router_topk <= 0) {
    ThrowUserError(SourceLocation{}, "moe_router_topk", "must be positive for an MoE model");
  }
  if (t.recompute.granularity == RecomputeGranularity::kSelective) SelectiveMask(t.recompute);
}

LayerCost LayerCostModel::TransformerLayer(int64_t layer) const {
  if (layer < 0 || layer >= job_.model.num_layers) {
    ThrowUserError(fmt::format("layer {} is outside 0..{}", layer, job_.model.num_layers - 1));
  }
  return Layer(layer, job_.model.IsMoeLayer(layer));
}

LayerCost LayerCostModel::Layer(int64_t layer, bool moe) const {
  const ModelSpec& m = job_.model;
  const ParallelPlan& p = job_.parallel;
  const TrainingSettings& t = job_.training;
  const int tp = p.tp;
  const bool sp = p.sequence_parallel && tp > 1;
  const double b = ActivationBytes(t.precision);
  const DType g = t.precision.gemm;
  const int64_t H = m.hidden_size;
  // Tokens of one micro-batch on this CP rank; with SP the norms, residual adds and dropout
  // see 1/TP of them.
  const int64_t T = t.micro_batch_size * t.seq_length / p.cp;
  const int64_t T_sp = sp ? CeilDiv(T, tp) : T;
  const int64_t hidden_bytes = static_cast<int64_t>(T * H * b);

  Builder c(*this, moe ? "moe" : "dense");
  // PyTorch eager runs norms, rotary and SwiGLU op by op (memory_bound_model.h).
  const bool eager = !t.fused_elementwise;
  auto norm = [&](int64_t tokens, int64_t width) {
    return eager && m.normalization == NormType::kRMSNorm ? EagerRmsNormBytes(tokens, width, b)
                                                          : NormBytes(tokens, width, b);
  };

  // ---- attention block --------------------------------------------------------------------
  c.MemoryBound(kLayernorm, norm(T_sp, H));
  // TP entry: SP all-gathers the sequence (reduce-scatter of the gradient in backward);
  // without SP the entry is an identity forward and an all-reduce of the input gradient.
  if (sp) {
    c.Comm(kAttnProj, "attention input all-gather", Collective::kAllGather,
           Collective::kReduceScatter, ParallelDim::kTP, hidden_bytes);
  } else {
    c.Comm(kAttnProj, "attention input-gradient all-reduce", Collective::kAllReduce,
           Collective::kAllReduce, ParallelDim::kTP, hidden_bytes, /*forward=*/false);
  }
  const int64_t q_heads = CeilDiv(m.num_attention_heads, tp);
  const ModelSpec::LayerAttention geometry = m.AttentionOf(layer);
  AttentionShape shape;
  shape.batch = t.micro_batch_size;
  shape.q_heads = q_heads;
  shape.seq = t.seq_length;
  shape.causal = true;
  shape.window = geometry.window;
  shape.cp = p.cp;
  int64_t attention_out_width = 0;
  if (m.attention == AttentionType::kMultiLatent) {
    // DeepSeek MLA (Megatron multi_latent_attention.py): the down projections are replicated
    // on every TP rank, the up projections column-parallel, the output row-parallel.
    const MlaSpec& a = m.mla;
    const int64_t qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    if (a.q_lora_rank > 0) {
      c.Linear(kAttnProj, T, H, a.q_lora_rank, g, "linear_q_down_proj");
      c.MemoryBound(kAttnProj, NormBytes(T, a.q_lora_rank, b));
      c.Linear(kMlaUpProj, T, a.q_lora_rank, q_heads * qk, g, "linear_q_up_proj");
    } else {
      c.Linear(kAttnProj, T, H, q_heads * qk, g, "linear_q_proj");
    }
    c.Linear(kAttnProj, T, H, a.kv_lora_rank + a.qk_pos_emb_head_dim, g, "linear_kv_down_proj");
    c.MemoryBound(kAttnProj, NormBytes(T, a.kv_lora_rank, b));
    c.Linear(kMlaUpProj, T, a.kv_lora_rank, q_heads * (a.qk_head_dim + a.v_head_dim), g,
             "linear_kv_up_proj");
    c.MemoryBound(kMlaUpProj,
                  RotaryBytes(T, q_heads * a.qk_pos_emb_head_dim, a.qk_pos_emb_head_dim, b));
    shape.kv_heads = q_heads;  // K and V are expanded per head by the up projection
    shape.head_dim_qk = qk;
    shape.head_dim_v = a.v_head_dim;
    attention_out_width = q_heads * a.v_head_dim;
  } else {
    // Per-layer geometry: Gemma 4's global layers have wider heads, fewer KV heads and one
    // projection for K and V.
    const int64_t d = geometry.head_dim;
    const int64_t kv_heads = std::max<int64_t>(1, CeilDiv(geometry.kv_heads, tp));
    // Fused QKV, column-parallel (Megatron linear_qkv).
    c.Linear(kAttnProj, T, H, (q_heads + geometry.kv_tensors * kv_heads) * d, g, "linear_qkv");
    if (m.qk_layernorm) {
      c.MemoryBound(kAttnProj, NormBytes(T, q_heads * d, b));
      c.MemoryBound(kAttnProj, NormBytes(T, kv_heads * d, b));
    }
    if (!m.learned_position_embeddings) {
      c.MemoryBound(kAttnProj, eager ? EagerRotaryBytes(T, q_heads * d, kv_heads * d, b)
                                     : RotaryBytes(T, q_heads * d, kv_heads * d, b));
    }
    if (eager && kv_heads < q_heads) {
      c.MemoryBound(kCoreAttn, RepeatKvBytes(T, kv_heads * d, q_heads * d, b));
    }
    shape.kv_heads = kv_heads;
    shape.head_dim_qk = d;
    shape.head_dim_v = d;
    attention_out_width = q_heads * d;
  }
  const auto [attention_f, attention_b] = c.Attention(kCoreAttn, shape);
  // The ring passes K and V (only K when V is the same tensor).
  const bool one_kv_tensor = m.attention != AttentionType::kMultiLatent && geometry.kv_tensors == 1;
  const int64_t kv_chunk = static_cast<int64_t>(
      static_cast<double>(t.micro_batch_size) * (t.seq_length / p.cp) * shape.kv_heads *
      (shape.head_dim_qk + (one_kv_tensor ? 0 : shape.head_dim_v)) * b);
  c.RingExchange(kCoreAttn, kv_chunk, attention_f, attention_b);
  c.Linear(kAttnProj, T, attention_out_width, H, g, "linear_proj");  // row-parallel
  if (sp) {
    c.Comm(kAttnProj, "attention output reduce-scatter", Collective::kReduceScatter,
           Collective::kAllGather, ParallelDim::kTP, hidden_bytes);
  } else {
    c.Comm(kAttnProj, "attention output all-reduce", Collective::kAllReduce, Collective::kAllReduce,
           ParallelDim::kTP, hidden_bytes, /*forward=*/true,
           /*backward=*/false);
  }
  if (t.hidden_dropout > 0) c.MemoryBound(kOther, DropoutBytes(T_sp, H, b));
  c.MemoryBound(kOther, ResidualAddBytes(T_sp, H, b));
  // Gemma-style post-norms beyond the two pre-norms.
  for (int i = 2; i < m.norms_per_layer; ++i) c.MemoryBound(kLayernorm, norm(T_sp, H));

  // ---- MLP block --------------------------------------------------------------------------
  c.MemoryBound(kLayernorm, norm(T_sp, H));
  const int gate = m.swiglu ? 2 : 1;
  auto activation = [&](int64_t tokens, int64_t width) {
    if (!m.swiglu) return GeluBytes(tokens, width, b);
    return eager ? EagerSwiGluBytes(tokens, width, b) : SwiGluBytes(tokens, width, b);
  };
  // A TP-sharded MLP of width `ffn` on the layer's T tokens, with its TP entry/exit.
  auto tensor_parallel_mlp = [&](unsigned tags, int64_t ffn, const char* name) {
    if (sp) {
      c.Comm(tags, fmt::format("{} input all-gather", name), Collective::kAllGather,
             Collective::kReduceScatter, ParallelDim::kTP, hidden_bytes);
    } else {
      c.Comm(tags, fmt::format("{} input-gradient all-reduce", name), Collective::kAllReduce,
             Collective::kAllReduce, ParallelDim::kTP, hidden_bytes, false);
    }
    const int64_t local = CeilDiv(ffn, tp);
    c.Linear(tags, T, H, gate * local, g, "linear_fc1");  // gate and up fused, column-parallel
    c.MemoryBound(tags, activation(T, local));
    c.Linear(tags, T, local, H, g, "linear_fc2");  // row-parallel
    if (sp) {
      c.Comm(tags, fmt::format("{} output reduce-scatter", name), Collective::kReduceScatter,
             Collective::kAllGather, ParallelDim::kTP, hidden_bytes);
    } else {
      c.Comm(tags, fmt::format("{} output all-reduce", name), Collective::kAllReduce,
             Collective::kAllReduce, ParallelDim::kTP, hidden_bytes, true, false);
    }
  };
  if (!moe) {
    tensor_parallel_mlp(kMlp, m.ffn_hidden_size, "MLP");
  } else {
    // MoE (Megatron MoELayer with the all-to-all token dispatcher). Tokens enter on their
    // sequence-parallel shard: Megatron requires SP whenever TP and EP are combined.
    const MoeSpec& e = m.moe;
    const int64_t T_moe = tp > 1 ? CeilDiv(T, tp) : T;
    const int64_t k = e.router_topk;
    const int64_t local_experts = CeilDiv(e.num_experts, p.ep);
    const int64_t expert_ffn = CeilDiv(e.ffn_hidden_size, p.etp);
    const MoeExpertCompute layout = t.moe_expert_compute;
    // Rows each local expert computes, and the rows this rank sends through the all-to-all.
    std::vector<int64_t> per_expert;
    int64_t exchanged_rows = T_moe * k;
    int64_t row_len = 0, capacity = 0;  // kCapacitySlots: per sequence (CP shard)
    switch (layout) {
      case MoeExpertCompute::kGroupedTokens:
        // Balanced routing: this rank's experts receive tokens·top-k copies, x ETP after the
        // expert-TP gather.
        per_expert = SplitTokens(T_moe * k * p.etp, local_experts);
        break;
      case MoeExpertCompute::kCapacitySlots: {
        // Training masks span the whole sequence (generate_masks; the per-CP-shard variant
        // is for inference), so the capacity comes from the full length while this rank holds
        // 1/CP of its tokens; TP shards the slots like the grouped path's tokens.
        row_len = t.seq_length / p.cp;
        capacity = MaxTextExpertCapacity(t.seq_length, k, e.num_experts, e.capacity_factor);
        // Every expert computes all its capacity slots, filled or not; with EP a rank's local
        // experts take the slots of the EP group's sequences.
        const int64_t slots = CeilDiv(t.micro_batch_size * capacity * e.num_experts, p.cp * tp);
        per_expert.assign(local_experts, CeilDiv(slots * p.ep * p.etp, e.num_experts));
        exchanged_rows = slots;
        break;
      }
      case MoeExpertCompute::kEveryExpert:
        per_expert.assign(local_experts, T_moe * p.ep * p.etp);
        exchanged_rows = T_moe * e.num_experts;
        break;
    }
    const int64_t copies_bytes = static_cast<int64_t>(static_cast<double>(exchanged_rows) * H * b);
    // DeepEP crosses the network once per destination node, not once per expert copy. The
    // all-to-all's NVLink share shrinks with it, which understates the forwarding hop; it runs
    // beside the network share and is far shorter whenever the group spans nodes.
    const int64_t dispatch_bytes =
        t.deepep && layout == MoeExpertCompute::kGroupedTokens
            ? static_cast<int64_t>(
                  copies_bytes *
                  DeepEpNetworkShare(e.num_experts, k,
                                     GroupFor(ParallelDim::kEP, p, job_.cluster.gpus_per_node),
                                     e.router_groups, e.router_group_topk))
            : copies_bytes;
    const DType half = t.precision.HalfPrecision();
    // kCapacitySlots: the one-hot einsums work per sequence on E·C slots of H/TP features.
    const int64_t mask_slots = e.num_experts * capacity;
    const int64_t sequences = t.micro_batch_size;
    const int64_t mask_width = CeilDiv(H, tp);
    // Shared experts read the layer's input, so Megatron computes them before the dispatch
    // (fine_grained_callables.py, the pre-dispatch node).
    if (e.shared_expert_ffn_hidden_size > 0) {
      tensor_parallel_mlp(kMoe | kSharedExperts, e.shared_expert_ffn_hidden_size, "shared experts");
    }
    c.Linear(kMoe, T_moe, H, e.num_experts, half, "router");  // never FP8
    c.MemoryBound(kMoe, RouterBytes(T_moe, e.num_experts));
    const bool sort = p.ep > 1 && local_experts > 1;
    const bool fused_permutation = t.moe_permutation == MoePermutation::kFused;
    // Elements the unfused paths accumulate atomically: every copy's hidden vector.
    const double copy_elements = static_cast<double>(T_moe) * k * H;
    if (layout == MoeExpertCompute::kGroupedTokens && fused_permutation) {
      c.MemoryBound(kMoe, PermuteBytes(T_moe, k, H, b, sort));
    } else if (layout == MoeExpertCompute::kGroupedTokens) {
      // index_select's gradient is index_add_, torch.gather's a scatter_add_.
      const AtomicAdd gradient = t.moe_permutation == MoePermutation::kIndexSelect
                                     ? AtomicAdd::kIndexAdd
                                     : AtomicAdd::kScatterAdd;
      c.MemoryBound(kMoe, UnfusedPermuteBytes(T_moe, k, H, b, sort));
      c.AtomicAdds(kMoe, 0, gradient, copy_elements, gradient);
    } else if (layout == MoeExpertCompute::kCapacitySlots) {
      // dispatch "BSM,BSEC -> EBCM" per sequence: [E·C, M] = maskᵀ[E·C, S] · x[S, M]; its
      // input gradient is mask · dY. MaxText keeps both einsums out of quantisation
      // (get_einsum, DISPATCH/COMBINE), so they run in the compute dtype.
      c.MaskMatmul(kMoe, {mask_slots, mask_width, row_len, sequences},
                   {row_len, mask_width, mask_slots, sequences}, half);
    }
    c.Comm(kMoe, "MoE dispatch all-to-all", Collective::kAllToAll, Collective::kAllToAll,
           ParallelDim::kEP, dispatch_bytes);
    c.Comm(kMoe, "MoE dispatch expert-TP all-gather", Collective::kAllGather,
           Collective::kReduceScatter, ParallelDim::kETP, copies_bytes * p.etp);
    c.MarkDispatched();
    int64_t expert_rows = 0;
    for (int64_t r : per_expert) expert_rows += r;
    const DType expert_dtype = t.precision.ExpertGemm();
    c.GroupedLinear(kMoe, per_expert, H, gate * expert_ffn, expert_dtype, "linear_fc1");
    c.MemoryBound(kMoe | kMoeAct, activation(expert_rows, expert_ffn));
    c.GroupedLinear(kMoe, per_expert, expert_ffn, H, expert_dtype, "linear_fc2");
    c.Comm(kMoe, "MoE combine expert-TP reduce-scatter", Collective::kReduceScatter,
           Collective::kAllGather, ParallelDim::kETP, copies_bytes * p.etp);
    c.Comm(kMoe, "MoE combine all-to-all", Collective::kAllToAll, Collective::kAllToAll,
           ParallelDim::kEP, dispatch_bytes);
    c.MarkCombined();
    if (layout == MoeExpertCompute::kGroupedTokens && fused_permutation) {
      c.MemoryBound(kMoe, PermuteBytes(T_moe, k, H, b, sort));
    } else if (layout == MoeExpertCompute::kGroupedTokens) {
      // scatter_add_ back into the tokens (torchtitan multiplies by the probabilities first);
      // backward gathers.
      const bool probs = t.moe_permutation == MoePermutation::kGatherScatter;
      c.MemoryBound(kMoe, UnfusedUnpermuteBytes(T_moe, k, H, b, sort, probs));
      c.AtomicAdds(kMoe, copy_elements, AtomicAdd::kScatterAdd, 0, AtomicAdd::kScatterAdd);
    } else if (layout == MoeExpertCompute::kCapacitySlots) {
      // combine "EBCM,BSEC -> BSM": [S, M] = mask[S, E·C] · y[E·C, M]; gradient maskᵀ · dY.
      // The combine mask holds the router weights, so backward also forms its gradient
      // dMask[S, E·C] = dY[S, M] · yᵀ[M, E·C].
      const GemmShape mask_gradient{row_len, mask_slots, mask_width, sequences};
      c.MaskMatmul(kMoe, {row_len, mask_width, mask_slots, sequences},
                   {mask_slots, mask_width, row_len, sequences}, half, &mask_gradient);
    } else {
      // weight_sum "BSEM,BSE -> BSM": reads every expert's output once.
      const double bytes = static_cast<double>(T_moe) * (e.num_experts + 1) * H * b;
      c.MemoryBound(kMoe, OpBytes{bytes, bytes});
    }
  }
  if (t.hidden_dropout > 0) c.MemoryBound(kOther, DropoutBytes(T_sp, H, b));
  c.MemoryBound(kOther, ResidualAddBytes(T_sp, H, b));

  unsigned mask = 0;
  if (t.recompute.granularity == RecomputeGranularity::kFull) mask = ~0u;
  if (t.recompute.granularity == RecomputeGranularity::kSelective)
    mask = SelectiveMask(t.recompute);
  Builder::EpOverlap ep;
  if (moe && t.ep_overlap) {
    ep.combined_1f1b = t.ep_a2a_combined_1f1b;
    ep.deepep = !ep.combined_1f1b;
    ep.deepep_efficiency = options_.deepep_overlap_efficiency >= 0
                               ? options_.deepep_overlap_efficiency
                               : DeepEpOverlapEfficiency(t.sync_free_moe_stage);
    ep.delay_wgrad = t.delay_wgrad_compute;
    ep.paired_share =
        CombinedOneFOneBPairedShare(t.NumMicroBatches(p.dp), p.pp, std::max(1, p.vpp));
  }
  return c.Finish(mask, &ep);
}

LayerCost LayerCostModel::Embedding() const {
  const ModelSpec& m = job_.model;
  const ParallelPlan& p = job_.parallel;
  const TrainingSettings& t = job_.training;
  const double b = ActivationBytes(t.precision);
  const int64_t T = t.micro_batch_size * t.seq_length / p.cp;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const int64_t hidden_bytes = static_cast<int64_t>(T * m.hidden_size * b);
  Builder c(*this, "embedding");
  // Vocab-parallel lookup (Megatron VocabParallelEmbedding): every TP rank writes all T rows,
  // zero outside its vocabulary slice, then the ranks reduce.
  c.MemoryBound(kOther, {EmbeddingBytes(T, m.hidden_size, b).forward, 0});
  // A frozen (LoRA) embedding has no gradient to scatter.
  if (!t.lora.enabled) c.WeightGradMemoryBound(EmbeddingBytes(T, m.hidden_size, b).backward);
  if (sp) {
    c.Comm(kOther, "embedding reduce-scatter", Collective::kReduceScatter, Collective::kAllGather,
           ParallelDim::kTP, hidden_bytes);
  } else {
    c.Comm(kOther, "embedding all-reduce", Collective::kAllReduce, Collective::kAllReduce,
           ParallelDim::kTP, hidden_bytes, true, false);
  }
  const int64_t T_sp = sp ? CeilDiv(T, p.tp) : T;
  if (m.learned_position_embeddings) {
    c.MemoryBound(kOther, {EmbeddingBytes(T_sp, m.hidden_size, b).forward, 0});
    if (!t.lora.enabled) c.WeightGradMemoryBound(EmbeddingBytes(T_sp, m.hidden_size, b).backward);
    c.MemoryBound(kOther, ResidualAddBytes(T_sp, m.hidden_size, b));
  }
  if (t.hidden_dropout > 0) c.MemoryBound(kOther, DropoutBytes(T_sp, m.hidden_size, b));
  return c.Finish(0);
}

LayerCost LayerCostModel::OutputHead() const {
  const ModelSpec& m = job_.model;
  const ParallelPlan& p = job_.parallel;
  const TrainingSettings& t = job_.training;
  const double b = ActivationBytes(t.precision);
  const int64_t T = t.micro_batch_size * t.seq_length / p.cp;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const int64_t T_sp = sp ? CeilDiv(T, p.tp) : T;
  const int64_t hidden_bytes = static_cast<int64_t>(T * m.hidden_size * b);
  const int64_t vocab_local = m.PaddedVocabSize(p.tp) / p.tp;
  Builder c(*this, "output");
  c.MemoryBound(kOther, NormBytes(T_sp, m.hidden_size, b));
  if (sp) {
    c.Comm(kOther, "LM head input all-gather", Collective::kAllGather, Collective::kReduceScatter,
           ParallelDim::kTP, hidden_bytes);
  } else {
    c.Comm(kOther, "LM head input-gradient all-reduce", Collective::kAllReduce,
           Collective::kAllReduce, ParallelDim::kTP, hidden_bytes, false);
  }
  // Megatron's output layer is a plain ColumnParallelLinear: 16-bit even in FP8 recipes.
  c.Linear(kOther, T, m.hidden_size, vocab_local, t.precision.HalfPrecision(), "output_layer");
  c.MemoryBound(kOther, CrossEntropyBytes(T, vocab_local, b, t.cross_entropy_loss_fusion));
  // Vocab-parallel cross-entropy all-reduces three fp32 values per token over TP: the logit
  // max, the target logit and the sum of exponentials (megatron/core/tensor_parallel/
  // cross_entropy.py).
  for (const char* what :
       {"loss logit-max all-reduce", "loss target-logit all-reduce", "loss sum-exp all-reduce"}) {
    c.Comm(kOther, what, Collective::kAllReduce, Collective::kAllReduce, ParallelDim::kTP, T * 4,
           true, false);
  }
  return c.Finish(0);
}

LayerCost LayerCostModel::MtpModule() const {
  const ModelSpec& m = job_.model;
  const ParallelPlan& p = job_.parallel;
  const TrainingSettings& t = job_.training;
  const double b = ActivationBytes(t.precision);
  const int64_t T = t.micro_batch_size * t.seq_length / p.cp;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const int64_t T_sp = sp ? CeilDiv(T, p.tp) : T;
  Builder c(*this, "mtp");
  // enorm(embedding of the shifted tokens) and hnorm(previous hidden state), concatenated and
  // projected 2H -> H (DeepSeek-V3 §2.2). The projection applies its full weight to this
  // rank's tokens; how Megatron shards it over TP is not modelled.
  c.MemoryBound(kOther, NormBytes(T_sp, m.hidden_size, b));
  c.MemoryBound(kOther, NormBytes(T_sp, m.hidden_size, b));
  c.Linear(kOther, T_sp, 2 * m.hidden_size, m.hidden_size, t.precision.gemm, "eh_proj");
  LayerCost out = c.Finish(0);
  // DeepSeek-V3's MTP transformer block has the same kind as the model's last layer.
  const int64_t last = m.num_layers - 1;
  for (const LayerCost& part : {Embedding(), Layer(last, m.IsMoeLayer(last)), OutputHead()}) {
    out.forward += part.forward;
    out.backward_input += part.backward_input;
    out.backward_weight += part.backward_weight;
    out.recompute += part.recompute;
    out.flops_forward += part.flops_forward;
    out.flops_backward += part.flops_backward;
    out.flops_recompute += part.flops_recompute;
    out.hidden_comm_forward += part.hidden_comm_forward;
    out.hidden_comm_backward += part.hidden_comm_backward;
    out.comms.insert(out.comms.end(), part.comms.begin(), part.comms.end());
    out.lora_params += part.lora_params;
  }
  return out;
}

OptimizerCost LayerCostModel::OptimizerStep(int64_t params_updated) const {
  return OptimizerStepCost(job_.cluster.gpu, table_, job_.training.precision,
                           job_.training.optimizer, params_updated);
}

bool IsLayerRecomputed(const RecomputeSpec& spec, int64_t global_layer, int64_t index_in_chunk) {
  if (spec.granularity == RecomputeGranularity::kNone) return false;
  if (!spec.layer_ids.empty()) {
    return std::find(spec.layer_ids.begin(), spec.layer_ids.end(), global_layer) !=
           spec.layer_ids.end();
  }
  if (spec.granularity == RecomputeGranularity::kSelective) return true;
  if (spec.method == RecomputeMethod::kUniform) return true;
  return index_in_chunk < spec.num_layers;
}

}  // namespace sextant
