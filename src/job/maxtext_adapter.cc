// MaxText (JAX) configs: a device mesh of ici_* (within a node) and dcn_* (across nodes)
// axes, each -1 for "the rest". Key names and defaults: MaxText configs/base.yml.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "job/framework_adapter.h"
#include "job/framework_defaults.h"
#include "job/maxtext_remat.h"
#include "util/checked_math.h"
#include "util/dtype.h"

namespace sextant {
namespace {

// Mesh axes and the degree each feeds. base.yml: ici_fsdp_parallelism and
// dcn_data_parallelism default to -1, every other axis to 1.
enum class Role { kData, kFsdp, kTensor, kPipeline, kContext, kExpert };
struct Axis {
  std::string_view name;
  Role role;
};
constexpr Axis kAxes[] = {{"data", Role::kData},
                          {"fsdp", Role::kFsdp},
                          {"fsdp_transpose", Role::kFsdp},
                          {"sequence", Role::kContext},
                          {"context", Role::kContext},
                          {"context_autoregressive", Role::kContext},
                          {"tensor", Role::kTensor},
                          {"tensor_transpose", Role::kTensor},
                          {"tensor_sequence", Role::kTensor},
                          {"autoregressive", Role::kData},
                          {"expert", Role::kExpert},
                          {"pipeline", Role::kPipeline}};

std::vector<std::string> MeshKeys() {
  std::vector<std::string> keys;
  for (const Axis& axis : kAxes) {
    keys.push_back(fmt::format("ici_{}_parallelism", axis.name));
    keys.push_back(fmt::format("dcn_{}_parallelism", axis.name));
  }
  return keys;
}

std::string AxisKey(std::string_view tier, size_t axis) {
  return fmt::format("{}_{}_parallelism", tier, kAxes[axis].name);
}

// The configured size of each axis of a tier; -1 marks the axis that takes the rest.
// base.yml's default -1 axis (ici fsdp, dcn data) yields to an explicit -1 elsewhere.
std::vector<int64_t> TierSizes(const ConfigReader& c, std::string_view tier) {
  int explicit_fill = -1;
  for (size_t i = 0; i < std::size(kAxes); ++i) {
    if (c.IsSet(AxisKey(tier, i)) && *c.Int(AxisKey(tier, i)) == -1) {
      if (explicit_fill >= 0) {
        c.Fail(AxisKey(tier, i), fmt::format("only one {} axis may be -1 (also {})", tier,
                                             AxisKey(tier, explicit_fill)));
      }
      explicit_fill = static_cast<int>(i);
    }
  }
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < std::size(kAxes); ++i) {
    const bool default_fill =
        (tier == "ici" && kAxes[i].name == "fsdp") || (tier == "dcn" && kAxes[i].name == "data");
    int64_t value = c.IsSet(AxisKey(tier, i)) ? *c.Int(AxisKey(tier, i))
                                              : (default_fill && explicit_fill < 0 ? -1 : 1);
    if (value != -1 && (value < 1 || value > kParallelDegreeRange.max)) {
      c.Fail(AxisKey(tier, i), fmt::format("must be -1 or a positive integer up to {}, found {}",
                                           kParallelDegreeRange.max, value));
    }
    sizes.push_back(value);
  }
  return sizes;
}

// Resolves one tier of the mesh so that its product is `devices`.
std::vector<int64_t> ResolveTier(const ConfigReader& c, std::string_view tier, int64_t devices,
                                 std::string_view what) {
  std::vector<int64_t> sizes = TierSizes(c, tier);
  int64_t product = 1;
  int fill = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      fill = static_cast<int>(i);
    } else {
      product = CheckedMul(product, sizes[i]).value_or(kParallelDegreeRange.max + 1);
      product = std::min(product, kParallelDegreeRange.max + 1);  // too many: reported below
    }
  }
  // The axes that are not 1, each with where it was set: "ici_fsdp_parallelism=8 (file:32)".
  auto factors = [&] {
    std::string out;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == 1 || sizes[i] == -1) continue;
      out += fmt::format("{}{}={} ({})", out.empty() ? "" : " x ", AxisKey(tier, i), sizes[i],
                         c.IsSet(AxisKey(tier, i)) ? c.Where(AxisKey(tier, i)).ToString()
                                                   : std::string("base.yml default"));
    }
    return out.empty() ? std::string("every axis 1") : out;
  };
  if (fill >= 0) {
    if (devices % product != 0) {
      ThrowUserError(c.Where(AxisKey(tier, fill)), "",
                     fmt::format("{} mesh axes multiply to {} ({}), which does not divide {} {}",
                                 tier, product, factors(), devices, what));
    }
    sizes[fill] = devices / product;
  } else if (product != devices) {
    ThrowUserError(SourceLocation{}, fmt::format("{}_*_parallelism", tier),
                   fmt::format("{} mesh axes multiply to {} ({}) but there are {} {}", tier,
                               product, factors(), devices, what));
  }
  return sizes;
}

int64_t DcnProductWithoutFill(const ConfigReader& c, bool* has_fill) {
  int64_t product = 1;
  *has_fill = false;
  for (int64_t value : TierSizes(c, "dcn")) {
    if (value == -1) {
      *has_fill = true;
    } else {
      product = std::min(CheckedMul(product, value).value_or(kParallelDegreeRange.max + 1),
                         kParallelDegreeRange.max + 1);
    }
  }
  return product;
}

class MaxText final : public FrameworkAdapter {
 public:
  std::string_view Name() const override { return "maxtext"; }

  // MaxText's configs/base.yml: quantization "fp8" (or "nanoo_fp8" on AMD).
  std::string Fp8Override() const override { return "quantization fp8"; }
  std::string ParallelKey(ParallelAxis axis) const override {
    switch (axis) {
      case ParallelAxis::kTensor: return "ici_tensor_parallelism";
      case ParallelAxis::kPipeline: return "ici_pipeline_parallelism";
      case ParallelAxis::kExpert: return "ici_expert_parallelism";
      case ParallelAxis::kContext: return "ici_sequence_parallelism";
    }
    return "";
  }

  std::vector<std::string> KnownKeys() const override {
    std::vector<std::string> keys = MeshKeys();
    for (std::string_view key :
         {"model_name", "per_device_batch_size", "max_target_length", "remat_policy",
          // remat_policy custom: where each named tensor lives
          "decoder_layer_input", "context", "mlpwi", "mlpwi_0", "mlpwi_1", "mlpwo", "query_proj",
          "key_proj", "value_proj", "out_proj", "quantization", "dtype", "weight_dtype",
          "num_pipeline_microbatches", "gradient_accumulation_steps", "base_emb_dim",
          "base_num_query_heads", "base_num_kv_heads", "base_mlp_dim", "base_moe_mlp_dim",
          "base_num_decoder_layers", "head_dim", "vocab_size", "num_experts", "num_experts_per_tok",
          "mlp_activations", "logits_via_embedding", "opt_type", "use_turbo_deepep",
          "turbo_sync_free_moe_stage", "mtp_num_layers", "optimizer_memory_host_offload",
          "parameter_memory_host_offload", "first_num_dense_layers", "shared_experts",
          "attention_type", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
          "v_head_dim"}) {
      keys.emplace_back(key);
    }
    return keys;
  }

  void Build(AdapterContext& ctx, Job& job) const override {
    const ConfigReader& c = ctx.config;
    BuildModel(ctx, job);
    job.model.make_vocab_size_divisible_by = DefaultsForFramework("maxtext").vocab_multiple;

    // Mesh. Nodes: the dcn product when it has no -1 axis, else the request (default 1).
    bool dcn_fill = false;
    const int64_t dcn_fixed = DcnProductWithoutFill(c, &dcn_fill);
    int64_t nodes = ctx.requested_nodes > 0 ? ctx.requested_nodes : (dcn_fill ? 1 : dcn_fixed);
    if (!dcn_fill && ctx.requested_nodes > 0 && ctx.requested_nodes != dcn_fixed) {
      ThrowUserError(
          SourceLocation{}, "dcn_*_parallelism",
          fmt::format("the dcn mesh axes fix {} node(s) but {} were requested; set one dcn axis "
                      "to -1",
                      dcn_fixed, ctx.requested_nodes));
    }
    const std::vector<int64_t> ici = ResolveTier(c, "ici", ctx.gpus_per_node, "GPUs per node");
    const std::vector<int64_t> dcn = ResolveTier(c, "dcn", nodes, "nodes");
    int64_t degree[6] = {1, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < std::size(kAxes); ++i)
      degree[static_cast<int>(kAxes[i].role)] *= ici[i] * dcn[i];
    ParallelPlan& p = job.parallel;
    p.tp = static_cast<int>(degree[static_cast<int>(Role::kTensor)]);
    p.pp = static_cast<int>(degree[static_cast<int>(Role::kPipeline)]);
    p.cp = static_cast<int>(degree[static_cast<int>(Role::kContext)]);
    p.ep = static_cast<int>(degree[static_cast<int>(Role::kExpert)]);
    p.etp = p.tp;
    const int64_t fsdp = degree[static_cast<int>(Role::kFsdp)];
    // The batch is sharded over the data, fsdp and expert axes; expert parallelism lives
    // inside that data-parallel group, as in Megatron.
    ctx.fixed_data_parallel = static_cast<int>(degree[static_cast<int>(Role::kData)] * fsdp * p.ep);
    ctx.fixed_data_parallel_key = "ici/dcn data x fsdp x expert axes";
    ctx.requested_nodes = static_cast<int>(nodes);
    // Parameters shard over the fsdp axes and also over the expert and context axes: base.yml's
    // logical_axis_rules map 'embed' to ['fsdp', 'fsdp_transpose', 'sequence', 'tensor_transpose',
    // 'context', 'expert'] (expert weights: 'exp' on the expert axis, 'embed_no_exp' on the rest).
    p.fsdp2 = fsdp * p.ep * p.cp > 1;
    // The data axes appear in no parameter's sharding: each data-parallel replica holds the
    // whole fsdp-sharded state and the replicas all-reduce gradients (HSDP); with no sharding
    // axis at all it is plain data parallelism, every GPU holding everything.
    const int64_t data = degree[static_cast<int>(Role::kData)];
    if (p.fsdp2 && data > 1) p.fsdp_replicas = static_cast<int>(data);
    p.sequence_parallel = p.tp > 1;
    for (const std::string& key : MeshKeys()) {
      if (c.Find(key) == nullptr) continue;
      if (key.find("tensor") != std::string::npos)
        ctx.provenance.Record("tensor_model_parallel_size", key, c.Where(key));
      if (key.find("pipeline") != std::string::npos)
        ctx.provenance.Record("pipeline_model_parallel_size", key, c.Where(key));
      if (key.find("expert") != std::string::npos)
        ctx.provenance.Record("expert_model_parallel_size", key, c.Where(key));
    }
    if (data > 1) {
      ctx.notes.push_back(
          p.fsdp2 ? fmt::format("MaxText data axes ({} ways): the fsdp x expert x context "
                                "sharding repeats in each replica, whose gradients are "
                                "all-reduced (HSDP)",
                                data)
                  : fmt::format("MaxText data axes ({} ways), no sharding axis: every GPU holds "
                                "the whole model state, gradients all-reduced",
                                data));
    }

    // JAX preallocates XLA_PYTHON_CLIENT_MEM_FRACTION of HBM and XLA plans the step inside it;
    // Primus's runtime exports the experiment's env: before JAX starts.
    const ConfigReader env(ctx.module.env);
    if (const std::optional<double> fraction = env.Double("XLA_PYTHON_CLIENT_MEM_FRACTION")) {
      if (!(*fraction > 0 && *fraction <= 1)) {
        env.Fail("XLA_PYTHON_CLIENT_MEM_FRACTION",
                 fmt::format("must be a fraction of HBM in (0, 1], found {:g}", *fraction));
      }
      job.training.xla_memory_fraction = *fraction;
    }

    // Batch: per_device_batch_size x devices per step.
    TrainingSettings& t = job.training;
    t.seq_length = c.SizeInt("max_target_length", 2048, *SizeRangeOf("seq_length"));
    job.model.seq_length = t.seq_length;
    ctx.provenance.Record("seq_length", "max_target_length", c.Where("max_target_length"));
    // per_device_batch_size is one accumulation step's batch per device, and the step adds
    // gradient_accumulation_steps of them (MaxText configs/types.py calculate_global_batch_sizes:
    // micro_batch_size_to_train_on = devices x per_device_batch_size, global_batch_size_to_
    // train_on = that x gradient_accumulation_steps).
    const double per_device = c.Double("per_device_batch_size", 12.0);
    if (per_device <= 0) c.Fail("per_device_batch_size", "must be positive");
    int64_t micro_batches = c.SizeInt("gradient_accumulation_steps", 1, {1, int64_t{1} << 24});
    ctx.global_batch_per_device = per_device * static_cast<double>(micro_batches);
    ctx.provenance.Record("global_batch_size", "per_device_batch_size",
                          c.Where("per_device_batch_size"));
    ctx.provenance.Record("micro_batch_size", "per_device_batch_size",
                          c.Where("per_device_batch_size"));
    if (p.pp > 1) {
      const int64_t pipeline_micro =
          c.SizeInt("num_pipeline_microbatches", -1, {-1, int64_t{1} << 24});
      micro_batches *= pipeline_micro > 0 ? pipeline_micro : p.pp;
      t.pipeline_schedule = ScheduleKind::k1F1B;
    }
    if (micro_batches < 1) c.Fail("gradient_accumulation_steps", "must be positive");
    ctx.micro_batches_per_step = micro_batches;

    // Host offload of the training state (base.yml: both false). JAX moves the state to
    // pinned host memory and streams it through the update each step; neither the host copy
    // nor the transfers are modelled, so the projection keeps the state in HBM and says so.
    for (const char* key : {"optimizer_memory_host_offload", "parameter_memory_host_offload"}) {
      if (c.Bool(key, false)) {
        ctx.notes.push_back(fmt::format(
            "MaxText {}: the offloaded state projected as kept in GPU memory (host offload and "
            "its transfers are not modelled: memory is an upper bound)",
            key));
      }
    }

    // Rematerialisation.
    const std::string remat = c.String("remat_policy", "full");
    RecomputeSpec& r = t.recompute;
    if (const std::optional<RecomputeSpec> named = MaxTextRematPolicy(remat)) {
      r = *named;
      if (remat.ends_with("_offloaded")) {
        ctx.notes.push_back(fmt::format(
            "MaxText remat_policy {}: the offloaded tensors projected as kept in GPU memory (host "
            "offload is not modelled: an upper bound)",
            remat));
      }
    } else if (remat == "custom") {
      // Each named tensor is 'remat', 'device' or 'offload' (base.yml: all 'remat'); 'offload'
      // is projected as 'device' (host memory is not modelled).
      auto kept = [&](std::string_view key) {
        const std::string where = c.String(key, "remat");
        if (where != "remat" && where != "device" && where != "offload") {
          c.Fail(key, fmt::format("must be remat, device or offload, found \"{}\"", where));
        }
        return where != "remat";
      };
      r.granularity = RecomputeGranularity::kSelective;
      r.matmul_outputs_only = true;
      r.save_qkv_projections = kept("query_proj") && kept("key_proj") && kept("value_proj");
      r.save_output_projection = kept("out_proj");
      r.save_attention_context = kept("context");
      r.save_mlp_outputs = kept("mlpwi_0") && kept("mlpwi_1");
    } else {
      c.Fail("remat_policy", fmt::format("unknown policy \"{}\" (MaxText's: {})", remat,
                                         MaxTextRematPolicyNames()));
    }
    t.compiled_graph = true;  // XLA compiles the step, loss included
    t.compiled_loss = true;

    // Precision.
    PrecisionRecipe& precision = t.precision;
    const std::string weight_dtype = c.String("weight_dtype", "float32");
    const std::string compute_dtype = c.String("dtype", "bfloat16");
    const std::optional<DType> weights = ParseDType(weight_dtype);
    const std::optional<DType> compute = ParseDType(compute_dtype);
    if (!weights) c.Fail("weight_dtype", fmt::format("unknown dtype \"{}\"", weight_dtype));
    if (!compute) c.Fail("dtype", fmt::format("unknown dtype \"{}\"", compute_dtype));
    precision.params = *weights;
    precision.gemm = *compute;
    // Layers compute, and their outputs (the scan carry the remat policies save) are kept, in
    // `dtype` whatever the weights' type (layers cast their kernels to it).
    precision.activations = *compute;
    // optax keeps no master copy: parameters are updated in weight_dtype. AdamW stores its
    // first moment in mu_dtype ("" = weight_dtype, base.yml) and its second in the parameters'
    // dtype (optax scale_by_adam); gradients are kept in grad_dtype (base.yml: float32).
    precision.main_params = precision.params;
    precision.exp_avg_sq = precision.params;
    precision.precision_aware_optimizer = true;  // the update reads the gradients as they are
    const std::string mu_dtype = c.String("mu_dtype", "");
    const std::optional<DType> mu = mu_dtype.empty() ? weights : ParseDType(mu_dtype);
    if (!mu) c.Fail("mu_dtype", fmt::format("unknown dtype \"{}\"", mu_dtype));
    precision.exp_avg = *mu;
    const std::string grad_dtype = c.String("grad_dtype", "float32");
    const std::optional<DType> grads = ParseDType(grad_dtype);
    if (!grads) c.Fail("grad_dtype", fmt::format("unknown dtype \"{}\"", grad_dtype));
    // train.py casts only float32 gradients to grad_dtype; gradients of bf16 weights stay bf16.
    precision.main_grads = *weights == DType::kFP32 ? *grads : *weights;
    const std::string quantization = c.String("quantization", "");
    if (quantization.find("fp8") != std::string::npos) {
      precision.gemm = DType::kFP8;
    } else if (quantization == "mxfp8") {
      precision.gemm = DType::kMXFP8;
    } else if (!quantization.empty()) {
      c.Fail("quantization",
             fmt::format("unsupported quantization \"{}\" (\"\", fp8, nanoo_fp8)", quantization));
    }
    t.optimizer = OptimizerKind::kAdam;
    // --enable-deepep / --sync-free-stage arrive as this Primus Turbo key.
    t.deepep = c.Bool("use_turbo_deepep", false);
    t.ep_overlap = t.deepep;  // Primus Turbo's DeepEP, as Primus's projection models it
    // Expert matmuls (layers/moe.py; base.yml: sparse_matmul true, capacity_factor -1):
    // sparse_matmul sorts tokens into a grouped GEMM; dense_matmul dispatches through one-hot
    // capacity masks when capacity_factor > 0 and runs every expert on every token otherwise.
    if (job.model.IsMoe() && !c.Bool("sparse_matmul", true)) {
      const double capacity_factor = c.Double("capacity_factor", -1.0);
      if (!std::isfinite(capacity_factor) || capacity_factor > kMaxCapacityFactor) {
        c.Fail("capacity_factor",
               fmt::format("must be a number up to {} (-1 or 0: no capacity)", kMaxCapacityFactor));
      }
      if (capacity_factor > 0) {
        t.moe_expert_compute = MoeExpertCompute::kCapacitySlots;
        job.model.moe.capacity_factor = capacity_factor;
        ctx.notes.push_back(fmt::format(
            "MaxText dense_matmul: one-hot dispatch/combine einsums, experts on capacity slots "
            "(capacity_factor {})",
            capacity_factor));
      } else {
        t.moe_expert_compute = MoeExpertCompute::kEveryExpert;
        ctx.notes.push_back(
            "MaxText dense_matmul without capacity_factor: every token through every expert");
      }
    }
    t.flash_attention = c.String("attention", "cudnn_flash_te").find("flash") != std::string::npos;
  }

 private:
  static void BuildModel(AdapterContext& ctx, Job& job) {
    const ConfigReader& c = ctx.config;
    const std::string model_name = c.String("model_name", "default");
    // MaxText loads configs/models/<model_name>.yml: the name alone decides the model, so an
    // unknown one is refused rather than replaced by the Primus model file's name.
    if (model_name != "default") {
      const ModelEntry& entry = FindLibraryModel(
          {model_name}, c.Where("model_name"), "model_name",
          "write its dimensions in the configuration instead, with model_name: default "
          "(base_emb_dim, base_num_decoder_layers, base_num_query_heads, base_mlp_dim, ...)");
      RequireSupportedArchitecture(entry.spec, "", c.Where("model_name"));
      job.model = entry.spec;
      // MaxText trains a multi-token-prediction module only when mtp_num_layers asks, whatever
      // the model (DeepSeek-V3's library entry carries its released one): the framework table.
      const int64_t mtp_default =
          DefaultsForFramework("maxtext").mtp_off ? 0 : entry.spec.mtp_num_layers;
      job.model.mtp_num_layers =
          c.SizeInt("mtp_num_layers", mtp_default, *SizeRangeOf("mtp_num_layers"));
      return;
    }
    // Dimensions written in the model file (MaxText base.yml names).
    ModelSpec& m = job.model;
    m.name = ctx.module.model_stem.empty() ? "maxtext model" : ctx.module.model_stem;
    // Each MaxText key with the range of the Megatron size it sets.
    auto sized = [&](std::string_view key, std::string_view canonical, int64_t fallback) {
      return c.SizeInt(key, fallback, *SizeRangeOf(canonical));
    };
    auto need = [&](std::string_view key, std::string_view canonical) {
      if (!c.IsSet(key))
        c.Fail(key,
               "missing: model_name is \"default\", so the model file must give the dimensions");
      return sized(key, canonical, 0);
    };
    m.num_layers = need("base_num_decoder_layers", "num_layers");
    m.hidden_size = need("base_emb_dim", "hidden_size");
    m.num_attention_heads = need("base_num_query_heads", "num_attention_heads");
    m.num_query_groups = sized("base_num_kv_heads", "num_query_groups", m.num_attention_heads);
    m.ffn_hidden_size = need("base_mlp_dim", "ffn_hidden_size");
    m.kv_channels = sized("head_dim", "kv_channels", m.hidden_size / m.num_attention_heads);
    m.vocab_size = need("vocab_size", "vocab_size");
    m.untie_embeddings_and_output_weights = !c.Bool("logits_via_embedding", false);
    const std::vector<std::string> activations = c.StringList("mlp_activations");
    m.swiglu = activations.size() >= 2;  // ["silu", "linear"]: gated MLP
    m.normalization = NormType::kRMSNorm;
    const int64_t experts = sized("num_experts", "num_experts", 1);
    m.moe.num_experts = experts > 1 ? experts : 0;
    if (m.IsMoe()) {
      m.moe.router_topk = sized("num_experts_per_tok", "moe_router_topk", 1);
      m.moe.ffn_hidden_size = sized("base_moe_mlp_dim", "moe_ffn_hidden_size", m.ffn_hidden_size);
      // DeepSeek-style blocks (decoder_block: deepseek): the first first_num_dense_layers are
      // dense MLPs of base_mlp_dim, the rest MoE; shared_experts always-on experts of
      // base_moe_mlp_dim each (layers/deepseek.py, layers/moe.py RoutedAndSharedMoE).
      const int64_t dense_first = c.SizeInt("first_num_dense_layers", 0, {0, m.num_layers});
      if (dense_first > 0) {
        m.moe.moe_layers.assign(static_cast<size_t>(m.num_layers), true);
        std::fill_n(m.moe.moe_layers.begin(), dense_first, false);
      }
      const int64_t shared = c.SizeInt("shared_experts", 0, {0, 64});
      m.moe.shared_expert_ffn_hidden_size = shared * m.moe.ffn_hidden_size;
    }
    // Multi-head latent attention (attention_type: mla, layers/attention_mla.py): queries through
    // a q_lora_rank bottleneck (0: none), keys and values through kv_lora_rank, heads of
    // qk_nope_head_dim + qk_rope_head_dim for queries and keys, v_head_dim for values.
    if (c.String("attention_type", "global") == "mla") {
      m.attention = AttentionType::kMultiLatent;
      m.mla.q_lora_rank = c.SizeInt("q_lora_rank", 0, {0, m.hidden_size});
      m.mla.kv_lora_rank = need("kv_lora_rank", "kv_channels");
      m.mla.qk_head_dim = need("qk_nope_head_dim", "kv_channels");
      m.mla.qk_pos_emb_head_dim = need("qk_rope_head_dim", "kv_channels");
      m.mla.v_head_dim = need("v_head_dim", "kv_channels");
    }
    ctx.notes.push_back(fmt::format(
        "model dimensions from {} (MaxText model_name \"default\")",
        ctx.module.model_file.empty() ? ctx.module.experiment_file : ctx.module.model_file));
  }
};

}  // namespace

const FrameworkAdapter& MaxTextAdapter() {
  static const MaxText adapter;
  return adapter;
}

}  // namespace sextant
