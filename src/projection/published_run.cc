#include "projection/published_run.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "config/config_node.h"
#include "hardware/hardware_library.h"
#include "job/config_reader.h"
#include "job/size_limits.h"
#include "model/model_library.h"
#include "util/checked_math.h"
#include "util/error.h"
#include "util/units.h"

namespace sextant {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Contains(const std::string& hay, const std::string& needle) {
  return Lower(hay).find(Lower(needle)) != std::string::npos;
}

// Whole numbers of a row are sizes and counts; anything beyond this is a typo or hostile and
// would overflow the arithmetic below (the size checks proper come once the job is built).
constexpr double kMaxCell = 9007199254740992.0;  // 2^53

std::optional<double> Number(const CsvTable& t, size_t row, const std::string& col) {
  const std::string& v = t.Get(row, col);
  if (v.empty()) return std::nullopt;
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int64_t> Int(const CsvTable& t, size_t row, const std::string& col) {
  const std::optional<double> d = Number(t, row, col);
  if (!d) return std::nullopt;
  if (!(std::abs(*d) <= kMaxCell)) {
    ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, col,
                   fmt::format("{} is out of range", ShortText(t.Get(row, col))));
  }
  return static_cast<int64_t>(std::llround(*d));
}

// A cell that sets a canonical Job size: checked against its range before any use, so the
// int fields (parallel degrees) and the products formed here cannot overflow.
std::optional<int64_t> SizeCell(const CsvTable& t, size_t row, const std::string& col,
                                std::string_view canonical, Provenance& provenance) {
  const std::optional<double> value = Number(t, row, col);
  if (!value) return std::nullopt;
  const SourceLocation where{t.file(), t.line(row), -1, -1};
  provenance.Record(std::string(canonical), col, where);
  const SizeRange range = SizeRangeOf(canonical).value_or(SizeRange{0, int64_t{1} << 30});
  // Compared as doubles, so 1e300 and NaN are caught before any conversion.
  if (!(*value >= static_cast<double>(range.min) && *value <= static_cast<double>(range.max))) {
    ThrowUserError(where, col,
                   fmt::format("{} is out of range: must be between {} and {}",
                               ShortText(t.Get(row, col)), range.min, range.max));
  }
  return static_cast<int64_t>(std::llround(*value));
}

// Source key = id up to its first digit-bearing segment ("torchtitan-T1-01-mem" -> torchtitan).
std::string SourceKey(const std::string& id) {
  const auto dash = id.find('-');
  std::string head = id.substr(0, dash);
  if (head == "amd" || head == "nemo") {
    const auto second = id.find('-', dash + 1);
    return id.substr(0, second);
  }
  return head;
}

const GpuSpec* GpuFor(const std::string& text) {
  for (const char* name : {"MI355X", "MI325X", "MI300X", "B200", "H200", "H100", "A100"}) {
    if (Contains(text, name)) return FindGpu(name);
  }
  return nullptr;
}

// Models the library does not carry are described by the row itself; the family decides the
// details the row does not state (corpus/validation/README.md, per source).
ModelSpec ModelFromRow(const CsvTable& t, size_t row, const std::string& name,
                       Provenance& provenance) {
  ModelSpec m;
  m.name = name;
  m.num_layers = SizeCell(t, row, "layers", "num_layers", provenance).value_or(0);
  m.hidden_size = SizeCell(t, row, "hidden", "hidden_size", provenance).value_or(0);
  m.ffn_hidden_size =
      SizeCell(t, row, "ffn_hidden", "ffn_hidden_size", provenance).value_or(4 * m.hidden_size);
  m.num_attention_heads = SizeCell(t, row, "heads", "num_attention_heads", provenance).value_or(0);
  m.num_query_groups =
      SizeCell(t, row, "kv_heads", "num_query_groups", provenance).value_or(m.num_attention_heads);
  if (m.num_attention_heads == 0 && m.hidden_size > 0) {
    // GPT sizes without stated heads: Megatron's tables use 128-wide heads.
    m.num_attention_heads = std::max<int64_t>(1, m.hidden_size / 128);
    m.num_query_groups = m.num_attention_heads;
  }
  m.kv_channels = m.num_attention_heads > 0 ? m.hidden_size / m.num_attention_heads : 0;
  m.vocab_size = SizeCell(t, row, "vocab", "vocab_size", provenance).value_or(51200);
  // GPT / MPT: LayerNorm, 2-matrix GeLU MLP, tied embeddings; GPT adds learned positions and
  // biases (Brown et al. 2020), MPT uses ALiBi without biases (MosaicML model card).
  m.swiglu = false;
  m.untie_embeddings_and_output_weights = false;
  m.normalization = NormType::kLayerNorm;
  m.add_bias_linear = !Contains(name, "MPT");
  m.learned_position_embeddings = !Contains(name, "MPT");
  m.max_position_embeddings = SizeCell(t, row, "seq_len", "seq_length", provenance).value_or(2048);
  return m;
}

std::string LibraryName(const std::string& model) {
  // Row spellings -> library names.
  const std::string l = Lower(model);
  if (l.find("llama 3.1 8b") != std::string::npos || l == "llama3-8b") return "llama3.1_8B";
  if (l.find("llama 3.1 70b") != std::string::npos || l == "llama3-70b") return "llama3.1_70B";
  if (l.find("llama 3.1 405b") != std::string::npos) return "llama3.1_405B";
  if (l == "llama2-7b") return "llama2_7B";
  if (l == "llama2-13b") return "llama2_13B";
  if (l == "llama2-70b") return "llama2_70B";
  if (l.find("qwen3-235b") != std::string::npos) return "qwen3_235B_A22B";
  return "";
}

}  // namespace

PublishedRun ReadPublishedRun(const CsvTable& t, size_t row) {
  PublishedRun r;
  r.id = t.Get(row, "id");
  r.source_key = SourceKey(r.id);
  r.metric_name = t.Get(row, "metric_name");
  try {
    r.measured = std::stod(t.Get(row, "metric_value"));
  } catch (const std::exception&) {
    ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, "metric_value", "not a number");
  }
  r.moe = Int(t, row, "moe_experts").value_or(0) > 0;
  const std::string gpu_text = t.Get(row, "gpu");
  r.vendor = Contains(gpu_text, "MI3") ? "AMD" : "NVIDIA";
  if (r.source_key == "torchtitan")
    r.framework = "torchtitan";
  else if (r.source_key == "llmfoundry")
    r.framework = "llmfoundry";
  else if (r.source_key.rfind("nemo", 0) == 0)
    r.framework = "nemo";
  else if (r.source_key.rfind("amd-ppipe", 0) == 0)
    r.framework = "primus";
  else
    r.framework = "megatron";

  auto fail = [&](std::string why) {
    r.reason = std::move(why);
    return r;
  };
  const GpuSpec* gpu = GpuFor(gpu_text);
  if (!gpu) return fail("GPU '" + gpu_text + "' is not in the hardware library");
  Provenance provenance;
  const auto seq = SizeCell(t, row, "seq_len", "seq_length", provenance);
  const auto mbs = SizeCell(t, row, "micro_batch", "micro_batch_size", provenance);
  const auto gbs = SizeCell(t, row, "global_batch", "global_batch_size", provenance);
  if (!seq) return fail("sequence length not stated");
  if (!mbs && !gbs) return fail("micro-batch and global batch not stated");

  Job job;
  job.framework = r.framework;
  job.name = r.id;
  const std::string model_name = t.Get(row, "model");
  const std::string lib = LibraryName(model_name);
  if (!lib.empty()) {
    const ModelEntry* e = FindModel(lib);
    if (!e) return fail("model '" + lib + "' missing from the model library");
    job.model = e->spec;
  } else if (r.moe) {
    return fail("MoE model '" + model_name + "' is not in the model library");
  } else {
    job.model = ModelFromRow(t, row, model_name, provenance);
  }
  if (auto v = SizeCell(t, row, "vocab", "vocab_size", provenance)) job.model.vocab_size = *v;
  job.model.seq_length = *seq;

  ParallelPlan& p = job.parallel;
  auto degree = [&](const char* col, std::string_view canonical) {
    return static_cast<int>(SizeCell(t, row, col, canonical, provenance).value_or(1));
  };
  p.tp = degree("tp", "tensor_model_parallel_size");
  p.pp = degree("pp", "pipeline_model_parallel_size");
  p.cp = degree("cp", "context_parallel_size");
  p.ep = degree("ep", "expert_model_parallel_size");
  p.vpp = degree("vpp", "virtual_pipeline_model_parallel_size");
  const int64_t gpus = SizeCell(t, row, "num_gpus", "num_gpus", provenance).value_or(0);
  const int64_t dense = int64_t{p.tp} * p.pp * p.cp;  // each <= 2^20: no overflow
  p.dp = static_cast<int>(
      SizeCell(t, row, "dp", "data_parallel_size", provenance).value_or(gpus / dense));
  if (p.dp < 1) return fail("data-parallel size cannot be derived");
  p.sequence_parallel = p.tp > 1;

  TrainingSettings& tr = job.training;
  tr.seq_length = *seq;
  tr.micro_batch_size = mbs.value_or(1);
  tr.global_batch_size = gbs.value_or(tr.micro_batch_size * p.dp);
  if (r.framework == "torchtitan" && p.pp > 1) {
    // torchtitan's "local batch" is split into pipeline micro-batches of
    // parallelism.pipeline_parallel_microbatch_size (default 1).
    tr.global_batch_size = gbs.value_or(tr.micro_batch_size * p.dp);
    tr.micro_batch_size = 1;
  }
  if (tr.global_batch_size % (tr.micro_batch_size * p.dp) != 0) {
    // Sources sometimes round; keep whole micro-batches per pipeline.
    tr.global_batch_size =
        std::max<int64_t>(1, tr.global_batch_size / (tr.micro_batch_size * p.dp)) *
        tr.micro_batch_size * p.dp;
  }
  const std::string precision = t.Get(row, "precision");
  if (Contains(precision, "fp8")) {
    tr.precision.gemm = DType::kFP8;
    // torchtitan's float8 is torchao's dynamic (tensorwise) scaling.
    tr.precision.fp8_current_scaling = r.framework == "torchtitan";
  }
  if (Contains(precision, "fp16")) {
    tr.precision.params = DType::kFP16;
    tr.precision.gemm = DType::kFP16;
    // Megatron keeps fp16 gradients unless accumulate_allreduce_grads_in_fp32 is set.
    tr.precision.main_grads = DType::kFP16;
  }
  std::string recompute = t.Get(row, "recompute");
  // Narayanan et al. 2021 count FLOPs with their eq. 3, which assumes full activation
  // recomputation; their Table 1 runs used it, although the table does not say so per row.
  if (recompute.empty() && r.source_key == "narayanan21") recompute = "full";
  if (Contains(recompute, "full")) {
    tr.recompute.granularity = RecomputeGranularity::kFull;
    tr.recompute.method = RecomputeMethod::kUniform;
    tr.recompute.num_layers = 1;
  } else if (Contains(recompute, "selective")) {
    tr.recompute.granularity = RecomputeGranularity::kSelective;
    // torchtitan's per-op policy (activation_checkpoint.selective_ac_option = "op").
    tr.recompute.per_op_policy = Contains(recompute, "op");
  }
  const std::string sharding = t.Get(row, "optimizer_sharding");
  if (Contains(sharding, "FSDP") || r.framework == "torchtitan" || r.framework == "llmfoundry") {
    // torchtitan and llm-foundry shard everything (FSDP2 / FSDP FULL_SHARD) with FP32 shards.
    p.fsdp2 = Contains(sharding, "FSDP") || sharding.empty();
  } else if (r.framework == "nemo" || r.framework == "primus") {
    p.distributed_optimizer = true;
  }
  if (r.framework == "torchtitan") {
    // torchtitan's tables name torch.compile per row ("FSDP" vs "FSDP+torch.compile"); without
    // it the model's norms, rotary and SwiGLU run in PyTorch eager.
    tr.fused_elementwise = Contains(t.Get(row, "notes"), "compile");
  }
  tr.flash_attention = r.framework != "megatron";  // 2021-22 Megatron and vTrain predate FA
  if (r.framework == "megatron") {
    tr.hidden_dropout = 0.1;  // GPT-3 recipes of that era trained with dropout
    tr.attention_dropout = 0.1;
  }
  tr.pipeline_schedule = p.vpp > 1 ? "interleaved" : "1f1b";
  // Gradient-reduction overlap: vTrain's Megatron-DeepSpeed runs had no DDP bucketing and the
  // 2021-22 Megatron papers predate overlapped reduction; NeMo recipes overlap both.
  tr.overlap_grad_reduce = r.framework == "nemo" || r.framework == "primus";
  tr.overlap_param_gather = tr.overlap_grad_reduce;

  if (r.framework == "torchtitan" && job.model.num_layers % p.pp != 0) {
    // torchtitan splits uneven layer counts by giving the first and last stages fewer layers
    // (they also hold the embedding and the LM head).
    const int64_t per = (job.model.num_layers + p.pp - 1) / p.pp;
    const int64_t ends = job.model.num_layers - per * (p.pp - 2);
    if (ends > 0 && ends % 2 == 0) {
      p.first_stage_layers = ends / 2;
      p.last_stage_layers = ends / 2;
    }
  }
  ClusterSpec& c = job.cluster;
  c.gpu = *gpu;
  c.gpus_per_node =
      static_cast<int>(SizeCell(t, row, "gpus_per_node", "gpus_per_node", provenance).value_or(8));
  if (c.gpus_per_node < 1 || c.gpus_per_node > 1024) {
    ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, "gpus_per_node",
                   fmt::format("{} is out of range: must be between 1 and 1024", c.gpus_per_node));
  }
  c.num_nodes = static_cast<int>(std::max<int64_t>(1, gpus / std::max(1, c.gpus_per_node)));
  if (Contains(gpu_text, "96GB")) {
    // Meta Grand Teton H100: 96 GB HBM2e at 500 W. torchtitan's benchmark notes place its
    // peak between H100 SXM (989 dense BF16 TFLOP/s) and H100 NVL (835); we take the middle.
    c.gpu.hbm_bytes = 96 * kGiB;
    for (auto& [dtype, tflops] : c.gpu.peak_dense_tflops) tflops *= 912.0 / 989.0;
    c.gpu.hbm_bandwidth = 2.4e12;  // HBM2e
  }
  if (r.source_key == "vtrain") {
    // vTrain's cluster (its validation configs): 800 Gb/s per node. The configs'
    // intra_node_bandwidth (150 GB/s) is not what vTrain's simulator charges collectives with:
    // it times TP and intra-node DP all-reduces from a measured NCCL table
    // (src/predictor.py, get_allreduce_LUT), so the A100 node keeps its NVSwitch links.
    c.gpu.nic_bandwidth = 800e9 / 8 / c.gpus_per_node;
  }
  // Every size in range, and no product of them beyond 2^53 (tokens, activations, params).
  CheckJobSizes(job, provenance);
  if (CheckedMul(dense, p.dp) != gpus && gpus > 0) {
    return fail(
        fmt::format("TP {} x PP {} x CP {} x DP {} != {} GPUs", p.tp, p.pp, p.cp, p.dp, gpus));
  }
  r.job = std::move(job);
  return r;
}

}  // namespace sextant
