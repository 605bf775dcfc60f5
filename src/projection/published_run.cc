#include "projection/published_run.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config_node.h"
#include "hardware/hardware_library.h"
#include "job/config_reader.h"
#include "job/framework_defaults.h"
#include "job/job_validation.h"
#include "job/size_limits.h"
#include "model/model_library.h"
#include "parallel/pipeline_layout.h"
#include "parallel/sharding.h"
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

// The stage of "sync-free stage 2" / "turbo_sync_free_moe_stage 1" in a row's text: the first
// digit within a few characters after a "stage" that follows "sync"; 1 when none is named.
int StatedSyncFreeStage(const std::string& text) {
  const std::string lower = Lower(text);
  for (const char* name : {"sync-free", "sync_free"}) {
    for (size_t sync = lower.find(name); sync != std::string::npos;
         sync = lower.find(name, sync + 1)) {
      for (size_t at = lower.find("stage", sync); at != std::string::npos && at < sync + 40;
           at = lower.find("stage", at + 1)) {
        for (size_t i = at + 5; i < lower.size() && i < at + 8; ++i) {
          if (std::isdigit(static_cast<unsigned char>(lower[i]))) return lower[i] - '0';
        }
      }
    }
  }
  return 1;
}

// Whether a row's text says Primus Turbo's grouped GEMM ran: "use_turbo_grouped_gemm" or
// "Turbo grouped GEMM", unless set to false ("use_turbo_grouped_gemm: false", "=0") or
// negated ("no Turbo grouped GEMM", "without ...").
bool StatesTurboGroupedGemm(const std::string& text) {
  const std::string lower = Lower(text);
  const std::string_view view(lower);
  for (const std::string_view name : {"use_turbo_grouped_gemm", "turbo grouped"}) {
    for (size_t at = view.find(name); at != std::string_view::npos; at = view.find(name, at + 1)) {
      size_t v = at + name.size();
      while (v < view.size() && (view[v] == ' ' || view[v] == ':' || view[v] == '=')) ++v;
      const std::string_view value = view.substr(v, 5);
      if (value.starts_with("false") || value.starts_with("0")) continue;
      const std::string_view before = view.substr(0, at);
      if (before.ends_with("no ") || before.ends_with("without ")) continue;
      return true;
    }
  }
  return false;
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

// `value`, read from the cell, inside the range the job allows for `canonical` (compared as
// doubles, so 1e300 and NaN are caught before any conversion); UserError naming the cell if not.
int64_t InRange(const CsvTable& t, size_t row, const std::string& col, std::string_view canonical,
                double value, SizeRange fallback) {
  const SizeRange range = SizeRangeOf(canonical).value_or(fallback);
  if (!(value >= static_cast<double>(range.min) && value <= static_cast<double>(range.max))) {
    ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, col,
                   fmt::format("{} is out of range: must be between {} and {}",
                               ShortText(t.Get(row, col)), range.min, range.max));
  }
  // Counts of GPUs, layers, tokens and sequences are whole; 512.5 is a typo, not 512.
  if (value != std::floor(value)) {
    ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, col,
                   fmt::format("{} is not a whole number", ShortText(t.Get(row, col))));
  }
  return static_cast<int64_t>(std::llround(value));
}

// A cell that sets a canonical Job size: checked against its range before any use, so the
// int fields (parallel degrees) and the products formed here cannot overflow. A cell that is
// not a number reads as not stated ("MLA" in kv_heads).
std::optional<int64_t> SizeCell(const CsvTable& t, size_t row, const std::string& col,
                                std::string_view canonical, Provenance& provenance) {
  const std::optional<double> value = Number(t, row, col);
  if (!value) return std::nullopt;
  provenance.Record(std::string(canonical), col, SourceLocation{t.file(), t.line(row), -1, -1});
  return InRange(t, row, col, canonical, *value, SizeRange{0, int64_t{1} << 30});
}

// A dimension used to recognise the model: 0 when the cell is empty. A stated value that is
// not a number or out of range ("abc", 0, -4096) is an error in the row, not "not stated".
int64_t DimensionCell(const CsvTable& t, size_t row, const std::string& col,
                      std::string_view canonical) {
  if (!t.HasColumn(col) || t.Get(row, col).empty()) return 0;
  const std::optional<double> value = Number(t, row, col);
  if (!value) {
    ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, col,
                   fmt::format("'{}' is not a number", ShortText(t.Get(row, col))));
  }
  return InRange(t, row, col, canonical, *value, SizeRange{1, int64_t{1} << 30});
}

// The seven fact columns (framework ... data) came later than the rest; a table without them
// reads as "not stated".
const std::string& FactCell(const CsvTable& t, size_t row, const std::string& col) {
  static const std::string kEmpty;
  return t.HasColumn(col) ? t.Get(row, col) : kEmpty;
}

const GpuSpec* GpuFor(const std::string& text) {
  // Longer names first: "GB200" contains "B200".
  for (const char* name : {"MI355X", "MI350X", "MI325X", "MI300X", "GB300", "GB200", "B300", "B200",
                           "H800", "H200", "H100", "A100"}) {
    if (Contains(text, name)) return FindGpu(name);
  }
  return nullptr;
}

// Models the library does not carry are described by the row itself. `family`, when the
// row's name names a library model whose sizes the row contradicts ("GPT3-5B" against gpt3's
// 175B, a Llama 3.1 8B with another width), gives the architecture the row does not state
// (MLP, norm, embeddings, positions); without one the row is a GPT-style model
// (corpus/validation/README.md, per source).
ModelSpec ModelFromRow(const CsvTable& t, size_t row, const std::string& name,
                       const ModelSpec* family, Provenance& provenance) {
  if (family != nullptr) {
    ModelSpec m = *family;
    m.name = name;
    m.num_layers = SizeCell(t, row, "layers", "num_layers", provenance).value_or(m.num_layers);
    const int64_t hidden = m.hidden_size;
    m.hidden_size = SizeCell(t, row, "hidden", "hidden_size", provenance).value_or(hidden);
    // An unstated MLP width keeps the family's ratio to the hidden size.
    m.ffn_hidden_size = SizeCell(t, row, "ffn_hidden", "ffn_hidden_size", provenance)
                            .value_or(m.ffn_hidden_size * m.hidden_size / hidden);
    m.num_attention_heads = SizeCell(t, row, "heads", "num_attention_heads", provenance)
                                .value_or(m.num_attention_heads);
    m.num_query_groups = std::min(
        SizeCell(t, row, "kv_heads", "num_query_groups", provenance).value_or(m.num_query_groups),
        m.num_attention_heads);
    m.kv_channels = m.hidden_size / m.num_attention_heads;
    m.max_position_embeddings =
        SizeCell(t, row, "seq_len", "seq_length", provenance).value_or(m.max_position_embeddings);
    return m;
  }
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

// A pipeline_model_parallel_layout the row's text states ("... layout Et|(tt|)*14,t|(tt|)*15,tL"),
// or "".
std::string StatedPipelineLayout(const std::string& text) {
  static const std::regex kLayout(R"(layout\s+(E[EtmL|()*,0-9]*L))");
  std::smatch m;
  return std::regex_search(text, m, kLayout) ? m[1].str() : "";
}

// An MoE expert capacity factor the row's text states ("capacity factor 1.25",
// "capacity_factor 4", "capacity factor of 1.25", "capacity-factor .5"), or 0. A factor beyond
// kMaxCapacityFactor is not a capacity anyone runs: it is ignored like an unreadable one.
double StatedCapacityFactor(const std::string& text) {
  static const std::regex kFactor(
      R"(capacity[ _-]factor\s*(?:of|[=:])?\s*([0-9]{1,6}(?:\.[0-9]{1,6})?|\.[0-9]{1,6}))",
      std::regex::icase);
  std::smatch m;
  if (!std::regex_search(text, m, kFactor)) return 0.0;
  const double factor = std::strtod(m[1].str().c_str(), nullptr);
  return factor <= kMaxCapacityFactor ? factor : 0.0;
}

// A network bandwidth the row's text states, in bytes/s per node: "800 Gbps" (per node) or
// "400 Gb/s per GPU"; 0 when none is stated. Only bits per second count ("150 GB/s" intra-node
// figures are bytes and name NVLink, not the network).
double StatedNodeNetwork(const std::string& text, int gpus_per_node) {
  static const std::regex kBandwidth(R"(([0-9]+(?:\.[0-9]+)?)\s*Gb(?:ps|/s)(\s+per\s+GPU)?)");
  std::smatch m;
  if (!std::regex_search(text, m, kBandwidth)) return 0.0;
  // strtod, not stod: a number too long for a double reads as infinity instead of throwing,
  // and a rate no network has (above 100 Tb/s) is not read as one.
  const double gbits = std::strtod(m[1].str().c_str(), nullptr);
  if (!std::isfinite(gbits) || gbits > 1e5) return 0.0;
  const double bytes_per_s = gbits * 1e9 / 8;
  return m[2].matched ? bytes_per_s * gpus_per_node : bytes_per_s;
}

// A run of decimal digits from the row's text; nullopt when it does not fit an int64.
std::optional<int64_t> Digits(std::string_view digits) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end == digits.data()) return std::nullopt;
  return value;
}

// `count` transformer layers to recompute when a row states how many but not which: one per
// model chunk in model order (the first stages hold the most micro-batches in flight, so
// relieving each of them once frees the most memory), then a second per chunk, and so on.
// Primus's tuned DeepSeek-V3 list (examples/moe_package, recompute_layer_ids
// 0,1,2,4,6,8,10,12,14 for layout Et|t|(tt|)*29,tL) is this rule for nine layers.
std::vector<int64_t> SpreadRecomputedLayers(const ModelSpec& model, const ParallelPlan& plan,
                                            int64_t count) {
  const std::vector<VirtualStage> stages = PlaceLayers(model, plan);  // in model order
  std::vector<int64_t> ids;
  for (int64_t round = 0; static_cast<int64_t>(ids.size()) < count; ++round) {
    bool any = false;
    for (const VirtualStage& vs : stages) {
      if (round >= vs.num_layers || static_cast<int64_t>(ids.size()) >= count) continue;
      ids.push_back(vs.first_layer + round);
      any = true;
    }
    if (!any) break;
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

PublishedRun ReadPublishedRun(const CsvTable& t, size_t row) {
  PublishedRun r;
  const SourceLocation where{t.file(), t.line(row), -1, -1};
  r.id = t.Get(row, "id");
  if (r.id.find_first_not_of(" \t") == std::string::npos) {
    ThrowUserError(where, "id", "empty: every row needs an id");
  }
  r.metric_name = t.Get(row, "metric_name");
  // A measurement is a positive, finite quantity (a throughput, a time, a memory peak, an MFU);
  // anything else would give a meaningless or infinite error.
  const std::optional<double> measured = ParseNumberCell(t.Get(row, "metric_value"));
  if (!measured) {
    ThrowUserError(where, "metric_value",
                   fmt::format("'{}' is not a number", ShortText(t.Get(row, "metric_value"))));
  }
  if (!(*measured > 0)) {
    ThrowUserError(where, "metric_value",
                   fmt::format("{} is not a measurement: must be above 0",
                               ShortText(t.Get(row, "metric_value"))));
  }
  r.measured = *measured;
  r.moe = Int(t, row, "moe_experts").value_or(0) > 0;
  const std::string gpu_text = t.Get(row, "gpu");
  r.vendor = Contains(gpu_text, "MI3") ? "AMD" : "NVIDIA";
  // Every fact below comes from the row's columns; what a row leaves empty is the stated
  // framework's own default (job/framework_defaults.h), today's Megatron-Core if none is named.
  bool known_framework = false;
  const FrameworkDefaults& stack = DefaultsForFramework(
      FactCell(t, row, "framework"), FactCell(t, row, "framework_version"), &known_framework);
  r.framework = std::string(stack.name);
  r.flops = stack.flops;
  r.reserved_memory = stack.memory_log_reserved;
  std::vector<std::string> assumed;
  if (!known_framework) {
    assumed.push_back(FactCell(t, row, "framework").empty()
                          ? "framework not stated: Megatron-Core defaults"
                          : "framework '" + ShortText(FactCell(t, row, "framework")) +
                                "' unknown: Megatron-Core defaults");
  }

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
  // Every missing fact at once: a reader who supplies one should not meet the next.
  if (!seq && !mbs && !gbs) return fail("sequence length, micro-batch and global batch not stated");
  if (!seq) return fail("sequence length not stated");
  if (!mbs && !gbs) return fail("micro-batch and global batch not stated");

  const std::string precision = t.Get(row, "precision");
  // The precision names the GEMMs' number format; a cell naming none of them is a typo, not
  // bf16.
  if (!precision.empty()) {
    bool known = false;
    for (const char* format : {"bf16", "fp16", "fp8", "fp4", "fp32", "float8", "tf32"}) {
      known = known || Contains(precision, format);
    }
    if (!known) {
      ThrowUserError(where, "precision",
                     fmt::format("'{}' names no number format (bf16, fp16, fp8, mxfp8, fp4, fp32)",
                                 ShortText(precision)));
    }
  }
  const std::string fp8_recipe = Lower(FactCell(t, row, "fp8_recipe"));
  if (fp8_recipe == "mxfp4" || Contains(precision, "fp4")) {
    return fail("FP4 GEMMs are not modelled");
  }

  Job job;
  job.framework = r.framework;
  job.name = r.id;
  const std::string model_name = t.Get(row, "model");
  ModelDims dims;
  dims.layers = DimensionCell(t, row, "layers", "num_layers");
  dims.hidden = DimensionCell(t, row, "hidden", "hidden_size");
  dims.heads = DimensionCell(t, row, "heads", "num_attention_heads");
  dims.experts = DimensionCell(t, row, "moe_experts", "num_experts");
  dims.ffn_hidden = DimensionCell(t, row, "ffn_hidden", "ffn_hidden_size");
  dims.moe_ffn_hidden = DimensionCell(t, row, "moe_ffn_hidden", "moe_ffn_hidden_size");
  const ModelMatch match = MatchModel(model_name, dims);
  if (match.entry) {
    job.model = match.entry->spec;
    if (match.how != "by name") {
      assumed.push_back("model '" + ShortText(model_name) + "' = library " +
                        match.entry->spec.name + " (" + match.how + ")");
    }
    if (dims.layers > 0 && dims.layers != job.model.num_layers) {
      // A shortened proxy of a library model ("4-layer proxy"): the row's depth, the
      // library's layer pattern cut to it.
      job.model.num_layers = SizeCell(t, row, "layers", "num_layers", provenance).value_or(0);
      if (!job.model.moe.moe_layers.empty()) job.model.moe.moe_layers.resize(job.model.num_layers);
      assumed.push_back(
          fmt::format("{} of {}'s layers", job.model.num_layers, match.entry->spec.name));
    }
  } else if (r.moe) {
    return fail("MoE model '" + ShortText(model_name) +
                "' matches no library model by name or by its dimensions");
  } else {
    // A dense model the library does not carry at these sizes: the family its name names, if
    // any, at the row's sizes; otherwise GPT's architecture. Either way the notes say which.
    const ModelMatch family = MatchModel(model_name, ModelDims{});
    const ModelSpec* family_spec = family.entry != nullptr ? &family.entry->spec : nullptr;
    job.model = ModelFromRow(t, row, model_name, family_spec, provenance);
    if (family_spec != nullptr) {
      assumed.push_back(fmt::format(
          "model '{}': {}'s architecture at the row's sizes (hidden {}, {} layers; the "
          "library's {} has hidden {}, {} layers)",
          ShortText(model_name), family_spec->name, job.model.hidden_size, job.model.num_layers,
          family_spec->name, family_spec->hidden_size, family_spec->num_layers));
    } else {
      assumed.push_back(fmt::format(
          "model '{}' is not in the library: built from the row's sizes as a GPT-style model "
          "(LayerNorm, two-matrix GeLU MLP, tied embeddings)",
          ShortText(model_name)));
    }
  }
  if (auto v = SizeCell(t, row, "vocab", "vocab_size", provenance)) job.model.vocab_size = *v;
  job.model.make_vocab_size_divisible_by = stack.vocab_multiple;
  static const std::regex kMtpOff(R"(MTP off|mtp_num_layers\s*[=:]?\s*0\b)", std::regex::icase);
  if (job.model.mtp_num_layers > 0 && std::regex_search(t.Get(row, "notes"), kMtpOff)) {
    job.model.mtp_num_layers = 0;  // the row says its run had multi-token prediction off
  }
  if (job.model.mtp_num_layers > 0 && stack.mtp_off) {
    job.model.mtp_num_layers = 0;
    assumed.push_back(
        fmt::format("no multi-token prediction: {} trains none unless configured", stack.name));
  }
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
  if (p.pp == 1 && p.vpp > 1) {
    // Without a pipeline Megatron drops the virtual stages (arguments.py validate_args sets
    // virtual_pipeline_model_parallel_size to None unless pipeline_model_parallel_size > 1).
    assumed.push_back(
        fmt::format("VPP {} with PP 1: no virtual stages, as Megatron ignores them "
                    "without a pipeline",
                    p.vpp));
    p.vpp = 1;
  }
  const std::optional<int64_t> stated_gpus = SizeCell(t, row, "num_gpus", "num_gpus", provenance);
  if (stated_gpus && *stated_gpus < 1) {
    ThrowUserError(where, "num_gpus", fmt::format("{} GPUs: must be at least 1", *stated_gpus));
  }
  const int64_t gpus = stated_gpus.value_or(0);
  const int64_t dense = int64_t{p.tp} * p.pp * p.cp;  // each <= 2^20: no overflow
  p.dp = static_cast<int>(
      SizeCell(t, row, "dp", "data_parallel_size", provenance).value_or(gpus / dense));
  if (p.dp < 1) return fail("data-parallel size cannot be derived");
  p.sequence_parallel = p.tp > 1;
  // The table has no expert-TP column: the framework's rule decides. A run whose TP x EP x PP
  // does not divide its GPUs cannot have used ETP = TP, so it set ETP to 1.
  p.etp = stack.expert_tp_follows_tp ? p.tp : 1;
  if (gpus > 0 && gpus % (int64_t{p.etp} * p.ep * p.pp) != 0) p.etp = 1;

  TrainingSettings& tr = job.training;
  tr.seq_length = *seq;
  tr.micro_batch_size = mbs.value_or(1);
  tr.global_batch_size = gbs.value_or(tr.micro_batch_size * p.dp);
  if (stack.local_batch && p.pp > 1) {
    // The stated batch is per data-parallel rank and is cut into pipeline micro-batches of
    // the framework's default size (1).
    tr.global_batch_size = gbs.value_or(tr.micro_batch_size * p.dp);
    tr.micro_batch_size = 1;
  }
  if (tr.global_batch_size % (tr.micro_batch_size * p.dp) != 0) {
    // Sources sometimes round; keep whole micro-batches per pipeline.
    const int64_t stated = tr.global_batch_size;
    tr.global_batch_size =
        std::max<int64_t>(1, tr.global_batch_size / (tr.micro_batch_size * p.dp)) *
        tr.micro_batch_size * p.dp;
    assumed.push_back(fmt::format(
        "global batch {} is not a whole number of micro-batches of {} x DP {}: {} projected",
        stated, tr.micro_batch_size, p.dp, tr.global_batch_size));
  }
  if (Contains(precision, "fp8") || !fp8_recipe.empty()) {
    // The column's recipes are Megatron-Core's names; unstated, the framework's default
    // (per-tensor current scaling or delayed).
    const std::string recipe =
        fp8_recipe.empty() && Contains(precision, "mxfp8") ? "mxfp8" : fp8_recipe;
    if (!tr.precision.UseFp8Recipe(recipe)) {
      tr.precision.UseFp8Recipe(stack.fp8_current_scaling ? "tensorwise" : "delayed");
      assumed.push_back(fp8_recipe.empty()
                            ? std::string("FP8 recipe not stated: the framework's default")
                            : fmt::format("FP8 recipe '{}' is not one Sextant models: the "
                                          "framework's default",
                                          ShortText(fp8_recipe)));
    }
    if (stack.fp8_primary_weights && !tr.precision.fp8_blockwise) {
      tr.precision.fp8_param_gather = true;
      assumed.push_back(
          "FP8 primary weights (fp8_param_gather), as the framework's FP8 recipes set them");
    }
  }
  if (Contains(precision, "fp16")) {
    tr.precision.params = DType::kFP16;
    tr.precision.gemm = DType::kFP16;
    if (stack.fp16_main_grads) tr.precision.main_grads = DType::kFP16;
  } else if (stack.bf16_main_grads && tr.precision.params == DType::kBF16) {
    tr.precision.main_grads = DType::kBF16;
  }
  std::string recompute = t.Get(row, "recompute");
  if (recompute.empty() && stack.full_recompute) recompute = "full";
  int64_t unlisted_recompute = -1;  // "N layer IDs" without the list
  if (Contains(recompute, "full")) {
    tr.recompute.granularity = RecomputeGranularity::kFull;
    tr.recompute.method = RecomputeMethod::kUniform;
    tr.recompute.num_layers = 1;
    std::smatch m;
    static const std::regex kPerStage(R"(([0-9]+) layers? per (virtual )?stage)");
    static const std::regex kLayerIds(R"(layer IDs \(([0-9, ]+)\))");
    if (std::regex_search(recompute, m, kLayerIds)) {
      // recompute_layer_ids: only the listed layers.
      const std::string ids = m[1].str();
      for (size_t pos = 0; pos < ids.size();) {
        const size_t end = ids.find(',', pos);
        const std::string id = ids.substr(pos, end == std::string::npos ? end : end - pos);
        if (const size_t digit = id.find_first_of("0123456789"); digit != std::string::npos) {
          const int64_t value = Digits(std::string_view(id).substr(digit)).value_or(-1);
          if (value < 0 || value >= job.model.num_layers) {
            ThrowUserError(SourceLocation{t.file(), t.line(row), -1, -1}, "recompute",
                           fmt::format("layer id '{}' is not a layer of the {}-layer model",
                                       ShortText(id.substr(digit)), job.model.num_layers));
          }
          tr.recompute.layer_ids.push_back(value);
        }
        if (end == std::string::npos) break;
        pos = end + 1;
      }
    } else if (static const std::regex kLayerCount(R"(([0-9]+) layer IDs)");
               std::regex_search(recompute, m, kLayerCount)) {
      // A count of recompute_layer_ids without the list: the layers are chosen once the
      // pipeline layout is known (below).
      unlisted_recompute =
          std::min(Digits(m[1].str()).value_or(job.model.num_layers), job.model.num_layers);
    } else if (std::regex_search(recompute, m, kPerStage)) {
      // --recompute-method block --recompute-num-layers N: the first N layers of each stage.
      tr.recompute.method = RecomputeMethod::kBlock;
      // A count beyond the model recomputes every layer of each stage.
      tr.recompute.num_layers = std::clamp<int64_t>(
          Digits(m[1].str()).value_or(job.model.num_layers), 1, job.model.num_layers);
    }
  } else if (Contains(recompute, "selective")) {
    tr.recompute.granularity = RecomputeGranularity::kSelective;
    // torchtitan's per-op policy (activation_checkpoint.selective_ac_option = "op").
    tr.recompute.per_op_policy = Contains(recompute, "op");
  }
  const std::string sharding = t.Get(row, "optimizer_sharding");
  const bool fsdp_stated = Contains(sharding, "FSDP") && !Contains(sharding, "FSDP=0");
  if (fsdp_stated || (stack.fsdp && sharding.empty())) {
    p.fsdp2 = true;
  } else if (Contains(sharding, "distributed optimizer")) {
    p.distributed_optimizer = true;
  } else if (Lower(sharding) != "none") {
    p.distributed_optimizer = stack.distributed_optimizer;
  }
  const std::string compile = Lower(FactCell(t, row, "compile"));
  tr.fused_elementwise = compile == "true" || (compile != "false" && stack.compiled);
  const std::string attention = Lower(FactCell(t, row, "attention"));
  tr.flash_attention = attention.empty() ? stack.flash_attention : attention == "flash";
  tr.cross_entropy_loss_fusion = stack.cross_entropy_loss_fusion;
  tr.cross_entropy_impl = stack.cross_entropy_impl;
  // torch.compile of the model's layers (their pointwise outputs recomputed in backward); the
  // loss stays eager unless the row says otherwise, as torchtitan's per-block compile ran it.
  tr.compiled_graph = compile == "true";
  if (tr.compiled_graph) {
    assumed.push_back(
        "compiled layers (compile = true): pointwise outputs recomputed in "
        "backward; the loss is not compiled");
  }
  tr.hidden_dropout = stack.dropout;
  tr.attention_dropout = stack.dropout;
  tr.pipeline_schedule = ForVirtualStages(ScheduleKind::k1F1B, p.vpp);
  // DeepEP dispatch/combine kernels, where the row names them or its framework uses them.
  // Primus Turbo's sync-free MoE (any stage) runs on Turbo's DeepEP: Primus turns DeepEP on
  // with it (research/primus-projection.md §1.2, --sync-free-stage).
  const std::string stack_text = FactCell(t, row, "framework_version") + " " + t.Get(row, "notes");
  tr.deepep = r.moe && (stack.deepep || Contains(stack_text, "deepep") ||
                        Contains(stack_text, "sync-free") || Contains(stack_text, "sync_free"));
  // Primus Turbo's sync-free MoE turns the fused permutation on at every stage.
  const bool sync_free = Contains(stack_text, "sync-free") || Contains(stack_text, "sync_free");
  tr.sync_free_moe_stage = sync_free && r.moe ? StatedSyncFreeStage(stack_text) : 0;
  tr.moe_permutation =
      sync_free ? MoePermutation::kFused : MoePermutationFor(stack, job.model.name, tr.deepep);
  // Turbo's grouped GEMM, named or required by a sync-free stage of 2 or more; else the
  // stack's own way of launching the experts' GEMMs.
  const bool turbo_grouped =
      StatesTurboGroupedGemm(stack_text) ||
      (sync_free && SyncFreeMoeStage(StatedSyncFreeStage(stack_text)).turbo_grouped_gemm);
  tr.expert_gemm_launch =
      turbo_grouped ? ExpertGemmLaunch::kGroupedKernel : stack.expert_gemm_launch;
  const std::string overlap = Lower(FactCell(t, row, "overlap"));
  if (overlap.empty()) {
    tr.overlap_grad_reduce = stack.overlap_grad_reduce;
    tr.overlap_param_gather = stack.overlap_param_gather;
  } else {
    tr.overlap_grad_reduce = Contains(overlap, "grad");
    tr.overlap_param_gather = Contains(overlap, "param");
  }
  tr.ep_overlap =
      r.moe && (overlap.empty() ? stack.ep_overlap && tr.deepep : Contains(overlap, "ep"));
  // The stack's published recipe for this model, GPU, precision and batch fills in what the
  // row leaves unstated: the all-to-all overlap schedule and selective recompute.
  const DType recipe_gemm = fp8_recipe == "mxfp8" ? DType::kMXFP8 : tr.precision.gemm;
  if (const PerformanceRecipe* recipe =
          FindPerformanceRecipe(r.framework, FactCell(t, row, "framework_version"), job.model.name,
                                gpu->name, recipe_gemm, tr.global_batch_size)) {
    const std::string preset = fmt::format("as {} {}'s recipe sets it: {}", recipe->framework,
                                           recipe->version, recipe->source);
    if (r.moe && overlap.empty() && recipe->moe_a2a_overlap && !tr.ep_overlap) {
      tr.ep_overlap = true;
      tr.ep_a2a_combined_1f1b = true;
      tr.delay_wgrad_compute = true;
      assumed.push_back(fmt::format(
          "MoE all-to-all overlapped with another micro-batch's compute (moe_a2a_overlap: "
          "overlap_moe_expert_parallel_comm, delay_wgrad_compute), {}",
          preset));
    }
    if (t.Get(row, "recompute").empty() && !recipe->recompute_modules.empty() &&
        tr.recompute.granularity == RecomputeGranularity::kNone) {
      tr.recompute.granularity = RecomputeGranularity::kSelective;
      tr.recompute.modules.assign(recipe->recompute_modules.begin(),
                                  recipe->recompute_modules.end());
      assumed.push_back(fmt::format("selective recompute of {}, {}",
                                    fmt::join(recipe->recompute_modules, ", "), preset));
    }
  }
  if (const double factor = StatedCapacityFactor(t.Get(row, "notes")); r.moe && factor > 0) {
    job.model.moe.capacity_factor = factor;
    if (stack.capacity_dense_dispatch) tr.moe_expert_compute = MoeExpertCompute::kCapacitySlots;
  }
  const int64_t virtual_stages = int64_t{p.pp} * std::max(1, p.vpp);
  if (p.pp > 1 && job.model.num_layers % virtual_stages != 0) {
    if (std::string layout = StatedPipelineLayout(t.Get(row, "notes")); !layout.empty()) {
      p.layout = std::move(layout);  // the row names its pipeline_model_parallel_layout
    } else if (stack.uneven_pp_ends && p.vpp <= 1) {
      // The first and last stages take fewer layers (they also hold the embedding and head).
      const int64_t per = (job.model.num_layers + p.pp - 1) / p.pp;
      const int64_t ends = job.model.num_layers - per * (p.pp - 2);
      if (ends > 0 && ends % 2 == 0) {
        p.first_stage_layers = ends / 2;
        p.last_stage_layers = ends / 2;
      }
    } else {
      // Megatron needs an explicit split here; recipes balance layers with the embedding and
      // the loss counted as one layer each (parallel/pipeline_layout.h).
      p.layout = BalancedPipelineLayout(job.model.num_layers, virtual_stages);
      if (!p.layout.empty() && job.model.mtp_num_layers > 0) {
        // MTP modules run after the last decoder layer, before the loss.
        p.layout.insert(p.layout.size() - 1, std::string(job.model.mtp_num_layers, 'm') + ",");
      }
      assumed.push_back("pipeline layout not stated: " + p.layout +
                        " (embedding and loss counted as a layer each)");
    }
    if (!p.layout.empty() && job.model.mtp_num_layers > 0 &&
        p.layout.find('m') == std::string::npos) {
      // A stated layout without MTP stages describes a run with MTP off.
      job.model.mtp_num_layers = 0;
    }
  }
  if (unlisted_recompute >= 0) {
    tr.recompute.layer_ids = SpreadRecomputedLayers(job.model, p, unlisted_recompute);
    assumed.push_back(fmt::format(
        "full recompute of {} layers whose ids the row does not list: {}, one per model "
        "chunk in model order before a second on any",
        unlisted_recompute, fmt::join(tr.recompute.layer_ids, ",")));
  }
  ClusterSpec& c = job.cluster;
  c.gpu = *gpu;
  // Unstated: the GPU's own node (NVLink domain), or the largest share of it that the GPU count
  // fills evenly (NVL72 jobs run 64 GPUs per rack).
  int64_t node = std::max(1, gpu->gpus_per_node);
  while (gpus > 0 && node > 1 && gpus % node != 0) --node;
  c.gpus_per_node = static_cast<int>(
      SizeCell(t, row, "gpus_per_node", "gpus_per_node", provenance).value_or(node));
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
  if (const double node_bytes_per_s =
          StatedNodeNetwork(gpu_text + " " + t.Get(row, "notes"), c.gpus_per_node)) {
    // A network bandwidth the row states (the cluster's, or what its source's model charged).
    c.gpu.nic_bandwidth = node_bytes_per_s / c.gpus_per_node;
  }
  // Every size in range, and no product of them beyond 2^53 (tokens, activations, params).
  CheckJobSizes(job, provenance);
  if (CheckedMul(dense, p.dp) != gpus && gpus > 0) {
    return fail(
        fmt::format("TP {} x PP {} x CP {} x DP {} != {} GPUs", p.tp, p.pp, p.cp, p.dp, gpus));
  }
  // The checks a configuration gets (job/job_validation.h): a layout Megatron would refuse -
  // EP not dividing the experts or the GPUs, TP not dividing the heads - is no run to score.
  try {
    ValidateJob(job, provenance, /*allow_uneven_layers=*/true, job.notes);
  } catch (const UserError& e) {
    return fail(e.what());
  }
  for (std::string& note : assumed) job.notes.push_back(std::move(note));
  r.job = std::move(job);
  return r;
}

void CheckDistinctIds(const CsvTable& t) {
  std::unordered_map<std::string, int64_t> first_line;
  for (size_t i = 0; i < t.size(); ++i) {
    const auto [it, inserted] = first_line.emplace(t.Get(i, "id"), t.line(i));
    if (!inserted) {
      ThrowUserError(
          SourceLocation{t.file(), t.line(i), -1, -1}, "id",
          fmt::format("'{}' is also the id of line {}", ShortText(it->first), it->second));
    }
  }
}

}  // namespace sextant
