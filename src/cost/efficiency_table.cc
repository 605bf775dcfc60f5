#include "cost/efficiency_table.h"

#include <algorithm>

#include <cmath>
#include <initializer_list>
#include <iterator>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/json_input.h"

namespace sextant {

namespace {

// Size ramps relative to the largest class, from Calculon's system files
// (calculon-ai/calculon systems/a100_80g.json, h100_80g_nvl8.json): matrix efficiency
// 0.1 / 0.6 / 0.9 / 0.95 from 0 / 1 / 16 / 128 GFLOP, and HBM efficiency 0.3 / 0.6 / 0.75 /
// 0.9 from 0 / 1 / 10 / 100 MB moved. We keep Calculon's shape and divide by its top value,
// so a vendor-specific ceiling can be put on top.
constexpr double kCalculonMatrixTop = 0.95;
constexpr double kCalculonHbmTop = 0.90;

// Largest-GEMM ceilings. AMD: the GPU's max-achievable FLOPs over its peak where AMD published
// them (GpuSpec::max_achievable_tflops: MI300X 708 / 654 / 1273 of 1307 / 1307 / 2614 TFLOP/s
// for bf16 / fp16 / fp8, MI325X 843 / 794 / 1519 of the same peaks); elsewhere (CDNA 4) the
// MI300X's fractions below. NVIDIA Ampere: Calculon's 0.95 (a100_80g.json, the system
// its Megatron validation ran on). NVIDIA Hopper and later: cuBLAS bf16 8192^3 measured at
// 1610 of ~2250 TFLOP/s on B200 (pyptx.dev/performance, PyTorch 2.8 / CUDA 12.8); these
// parts run below their tensor-core peak under their power limit, so the same fraction is
// used for H100 / H200.
constexpr double kAmdBf16Ceiling = 708.0 / 1307.0;
constexpr double kAmdFp16Ceiling = 654.0 / 1307.0;
constexpr double kAmdFp8Ceiling = 1273.0 / 2614.0;

// The GPU's own max-achievable fraction for `dtype`, or `fallback` where none is published.
double AmdCeiling(const GpuSpec& gpu, DType dtype, double fallback) {
  const double own = gpu.MaxAchievableFraction(dtype);
  return own > 0 ? own : fallback;
}
constexpr double kAmpereCeiling = kCalculonMatrixTop;
constexpr double kHopperBlackwellCeiling = 1610.0 / 2250.0;

// HBM ceilings. AMD: Primus projection's _ACTIVATION_BW_FRACTION = 0.566 for memory-bound
// layer-norm / residual / MoE element-wise kernels (research/primus-projection.md §3.3).
// NVIDIA: Calculon's 0.90 for transfers of 100 MB or more.
constexpr double kAmdHbmCeiling = 0.566;

// Shortest kernels measured in the TraceLens reports of the corpus
// (corpus/traces/TraceLens/*/..._perf_report_csvs): on H100 a 5x64x5 bmm takes 2.8 µs and a
// 141x512 layer norm 3.1 µs; on MI300X a 10x1000x512 addmm takes 5.3 µs.
constexpr double kNvidiaMinKernel = 2.8e-6;
constexpr double kAmdMinKernel = 5.3e-6;
constexpr double kNvidiaHbmCeiling = kCalculonHbmTop;

// Flash attention relative to the GEMM ceiling. FlashAttention-2 (Dao 2023, arXiv
// 2307.08691, abstract) reaches 50-73% of peak on A100: forward at the top of that range,
// backward (five matmuls, dQ atomics) at the bottom. Relative to Calculon's 0.95 GEMM
// ceiling that is 0.73/0.95 and 0.50/0.95; the same ratios are applied on AMD.
constexpr double kAttentionForwardVsGemm = 0.73 / kCalculonMatrixTop;
constexpr double kAttentionBackwardVsGemm = 0.50 / kCalculonMatrixTop;
// FlashAttention-2 on Hopper does not use the new tensor-core instructions (wgmma, TMA) and
// reaches only 35% of H100's peak forward (Shah et al. 2024, FlashAttention-3, arXiv
// 2407.08608, abstract); FlashAttention-3's backward is 1.5-1.75x FlashAttention-2's (§4.1) at
// ~50% of peak, which puts FlashAttention-2's backward near 0.50 / 1.65 = 30%. These are the
// kernels PyTorch's SDPA flash backend runs (torchtitan, llm-foundry); Hopper and Blackwell
// use them until a framework picks cuDNN / FlashAttention-3 (projection/layer_timing.cc).
// Measured on an H200 (tests/data/h200/attention.csv, PyTorch 2.11) the causal kernels reach
// 15-33% forward and 15-31% backward, and SDPA there picks cuDNN's kernels by default.
constexpr double kFa2HopperForward = 0.35;
constexpr double kFa2HopperBackward = 0.50 / 1.65;

// FP8 GEMMs on Hopper, measured on an H200 (tests/data/h200: the 159 training GEMM shapes as
// tensorwise `torch._scaled_mm`, cuBLASLt; `sextant calibrate`). With fast accumulation
// (fp8_fast_accum.json.gz), what Transformer Engine and torchao run for the forward GEMM, they
// reach 0.69 / 0.71 / 0.73 / 0.67 of the FP8 peak from 16 / 64 / 128 / 512 GFLOP: the bf16
// fractions of the default table, which they keep. With the split accumulator
// (kernels.json.gz), what both run for the input- and weight-gradient GEMMs, they reach
// 0.452 / 0.535 / 0.584 / 0.612: FP8 there is 1.3-1.75x faster than bf16, not 2x. Below
// 16 GFLOP (two FP8 GEMMs measured) the bf16 ramp scaled by the 16 GFLOP class's ratio,
// 0.452 / 0.678.
constexpr double kHopperFp8GradientGemm[] = {0.0503, 0.0503, 0.301, 0.301,
                                             0.452,  0.535,  0.584, 0.612};

// MI300X bf16 GEMM classes and launch floor fitted on the measured GEMM and elementwise
// kernels of the seven MI300X PyTorch traces with shapes in the corpus (TraceLens tests:
// mi300/{Qwen1.5-0.5B, owlv2, timesformer, resnet_act_checkpoint, ddp_resnet18},
// perf_model_normalization, torch_compile_triton), by
//   sextant calibrate <those traces> -o MI300X.json      (docs/calibrate.md)
// 44 GEMM shapes, 214 kernels; GEMM median error 67.8% -> 11.0% on them, and fitted on half of
// the traces it predicts the other half's GEMMs to 8.6% (median). Classes with fewer than
// three GEMMs (1 GFLOP, >= 128 GFLOP) keep the TraceLens-ceiling ramp: 0.342 and 708/1307.
constexpr double kMi300xBf16Gemm[] = {0.250, 0.206, 0.342, 0.530, 0.526, 0.540, 0.542, 0.542};
constexpr double kMi300xMinKernel = 4.63e-6;

SizeClassTable GemmRamp(double ceiling) {
  SizeClassTable t;
  t.thresholds = GemmSizeClassesGflop();
  for (double g : t.thresholds) {
    double calculon = g >= 128 ? 0.95 : g >= 16 ? 0.9 : g >= 1 ? 0.6 : 0.1;
    t.fractions.push_back(ceiling * calculon / kCalculonMatrixTop);
  }
  for (double& g : t.thresholds) g *= 1e9;  // the table is keyed by FLOPs
  return t;
}

SizeClassTable HbmRamp(double ceiling) {
  SizeClassTable t;
  t.thresholds = {0, 1e6, 10e6, 100e6};
  for (double calculon : {0.3, 0.6, 0.75, 0.9}) {
    t.fractions.push_back(ceiling * calculon / kCalculonHbmTop);
  }
  return t;
}

SizeClassTable Flat(double fraction) {
  SizeClassTable t;
  t.thresholds = {0};
  t.fractions = {fraction};
  return t;
}

}  // namespace

const std::vector<double>& GemmSizeClassesGflop() {
  // Finer than Calculon's four steps so that calibration can resolve more of the curve;
  // 1, 16 and 128 are Calculon's own boundaries.
  static const std::vector<double> kClasses = {0, 0.25, 1, 4, 16, 64, 128, 512};
  return kClasses;
}

int SizeClassTable::ClassOf(double size) const {
  int i = 0;
  for (int j = 0; j < static_cast<int>(thresholds.size()); ++j) {
    if (size >= thresholds[j]) i = j;
  }
  return i;
}

double SizeClassTable::Lookup(double size) const {
  if (fractions.empty()) return 1.0;
  return fractions[ClassOf(size)];
}

EfficiencyTable EfficiencyTable::Ideal() {
  EfficiencyTable t;
  t.gemm_[DType::kBF16] = Flat(1.0);
  t.hbm_ = Flat(1.0);
  t.attention_forward_fraction_ = 1.0;
  t.attention_backward_fraction_ = 1.0;
  t.source_ = "ideal (every fraction 1)";
  return t;
}

EfficiencyTable EfficiencyTable::Default(const GpuSpec& gpu) {
  EfficiencyTable t;
  double gemm_ceiling = gpu.arch == "sm_80" ? kAmpereCeiling : kHopperBlackwellCeiling;
  if (gpu.vendor == Vendor::kAMD) {
    const bool own = !gpu.max_achievable_tflops.empty();
    gemm_ceiling = AmdCeiling(gpu, DType::kBF16, kAmdBf16Ceiling);
    const double fp8_ceiling = AmdCeiling(gpu, DType::kFP8, kAmdFp8Ceiling);
    t.gemm_[DType::kBF16] = GemmRamp(gemm_ceiling);
    t.gemm_[DType::kFP16] = GemmRamp(AmdCeiling(gpu, DType::kFP16, kAmdFp16Ceiling));
    t.gemm_[DType::kFP8] = GemmRamp(fp8_ceiling);
    t.gemm_[DType::kMXFP8] = GemmRamp(fp8_ceiling);
    t.gemm_[DType::kFP4] = GemmRamp(fp8_ceiling);
    t.hbm_ = HbmRamp(kAmdHbmCeiling);
    t.min_kernel_seconds_ = kAmdMinKernel;
    t.source_ = own ? fmt::format(
                          "default {}: AMD's max-achievable TFLOP/s for it, Primus HBM "
                          "fraction, Calculon size ramps",
                          gpu.name)
                    : fmt::format(
                          "default {}: no max-achievable TFLOP/s published, the MI300X's "
                          "fraction of peak; Primus HBM fraction, Calculon size ramps",
                          gpu.name);
    if (gpu.name == "MI300X") {
      SizeClassTable& bf16 = t.gemm_[DType::kBF16];
      bf16.fractions.assign(std::begin(kMi300xBf16Gemm), std::end(kMi300xBf16Gemm));
      t.min_kernel_seconds_ = kMi300xMinKernel;
      t.source_ =
          "default MI300X: bf16 GEMM classes and launch floor fitted on the corpus's MI300X "
          "traces (sextant calibrate), TraceLens achievable TFLOP/s above 64 GFLOP, Primus HBM "
          "fraction";
    }
  } else {
    t.gemm_[DType::kBF16] = GemmRamp(gemm_ceiling);
    if (gpu.arch == "sm_90") {
      SizeClassTable fp8 = GemmRamp(gemm_ceiling);
      fp8.fractions.assign(std::begin(kHopperFp8GradientGemm), std::end(kHopperFp8GradientGemm));
      t.gradient_gemm_[DType::kFP8] = fp8;
      // Hopper has no MX formats: block-scaled FP8 runs on the same units.
      t.gradient_gemm_[DType::kMXFP8] = fp8;
    }
    t.hbm_ = HbmRamp(kNvidiaHbmCeiling);
    // Hopper and later: cuBLAS / CUTLASS 3 GEMMs are persistent warp-specialised kernels
    // whose epilogue overlaps the next tile (CUTLASS docs, "efficient_gemm.md", ping-pong
    // and cooperative kernels). Ampere's are not.
    t.overlapped_epilogue_ = gpu.arch != "sm_80";
    t.min_kernel_seconds_ = kNvidiaMinKernel;
    t.source_ = gpu.arch == "sm_80"
                    ? "default NVIDIA Ampere: Calculon A100 system file"
                    : "default NVIDIA Hopper/Blackwell: measured cuBLAS ceiling, Calculon ramps";
  }
  t.attention_forward_fraction_ = gemm_ceiling * kAttentionForwardVsGemm;
  t.attention_backward_fraction_ = gemm_ceiling * kAttentionBackwardVsGemm;
  if (gpu.vendor == Vendor::kNVIDIA && gpu.arch != "sm_80") {
    t.attention_forward_fraction_ = kFa2HopperForward;
    t.attention_backward_fraction_ = kFa2HopperBackward;
  }
  return t;
}

const SizeClassTable& EfficiencyTable::GemmTable(DType dtype) const {
  auto it = gemm_.find(dtype);
  if (it != gemm_.end()) return it->second;
  it = gemm_.find(DType::kBF16);
  if (it != gemm_.end()) return it->second;
  static const SizeClassTable kOne = Flat(1.0);
  return kOne;
}

double EfficiencyTable::GemmFraction(DType dtype, double flops) const {
  return GemmTable(dtype).Lookup(flops);
}

const SizeClassTable* EfficiencyTable::GradientGemmTable(DType dtype) const {
  auto it = gradient_gemm_.find(dtype);
  return it == gradient_gemm_.end() ? nullptr : &it->second;
}

double EfficiencyTable::GradientGemmFraction(DType dtype, double flops) const {
  const SizeClassTable* gradient = GradientGemmTable(dtype);
  return gradient ? gradient->Lookup(flops) : GemmFraction(dtype, flops);
}

void EfficiencyTable::SetGemmTable(DType dtype, SizeClassTable table) {
  gemm_[dtype] = std::move(table);
}

void EfficiencyTable::SetAttentionFractions(double forward, double backward) {
  attention_forward_fraction_ = forward;
  attention_backward_fraction_ = backward;
}

std::string EfficiencyTable::ToJson() const {
  nlohmann::ordered_json j;
  j["source"] = source_;
  j["overlapped_epilogue"] = overlapped_epilogue_;
  j["min_kernel_us"] = min_kernel_seconds_ * 1e6;
  nlohmann::ordered_json gemm = nlohmann::ordered_json::object();
  for (const auto& [dtype, table] : gemm_) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < table.thresholds.size(); ++i) {
      rows.push_back({{"min_gflop", table.thresholds[i] / 1e9}, {"fraction", table.fractions[i]}});
    }
    gemm[std::string(DTypeName(dtype))] = rows;
  }
  j["gemm"] = gemm;
  j["attention"] = {{"forward_fraction", attention_forward_fraction_},
                    {"backward_fraction", attention_backward_fraction_}};
  nlohmann::ordered_json hbm = nlohmann::ordered_json::array();
  for (size_t i = 0; i < hbm_.thresholds.size(); ++i) {
    hbm.push_back({{"min_mb", hbm_.thresholds[i] / 1e6}, {"fraction", hbm_.fractions[i]}});
  }
  j["hbm"] = hbm;
  return j.dump(2);
}

namespace {

// Bounds that keep a hostile file from building huge tables; real ones have under ten classes.
constexpr size_t kMaxClasses = 64;

[[noreturn]] void Bad(const std::string& file, const std::string& key, const std::string& why) {
  ThrowUserError(SourceLocation{file}, key, why);
}

double Number(const nlohmann::json& j, const std::string& file, const std::string& key) {
  if (!j.is_number() || !std::isfinite(j.get<double>())) Bad(file, key, "must be a number");
  return j.get<double>();
}

double Fraction(const nlohmann::json& j, const std::string& file, const std::string& key) {
  const double v = Number(j, file, key);
  if (!(v > 0 && v <= 1)) Bad(file, key, fmt::format("{} is not a fraction in (0, 1]", v));
  if (v < kMinEfficiencyFraction) {
    Bad(file, key,
        fmt::format("{} of peak is below {}: no kernel class runs that far under it", v,
                    kMinEfficiencyFraction));
  }
  return v;
}

// [{"<start_key>": x, "fraction": f}, ...] with starts ascending from 0, scaled by `unit`.
SizeClassTable ReadClasses(const nlohmann::json& j, const char* start_key, double unit,
                           const std::string& file, const std::string& key) {
  if (!j.is_array() || j.empty() || j.size() > kMaxClasses) {
    Bad(file, key, fmt::format("must be a list of 1 to {} classes", kMaxClasses));
  }
  SizeClassTable t;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", key, i);
    if (!j[i].is_object()) Bad(file, at, "must be an object");
    RefuseUnknownJsonKeys(j[i], {start_key, "fraction"}, file, at + ".");
    const double start = Number(RequiredJsonMember(j[i], start_key, file, at + "."), file,
                                fmt::format("{}.{}", at, start_key));
    if (i == 0 ? start != 0 : start <= t.thresholds.back() / unit) {
      Bad(file, fmt::format("{}.{}", at, start_key),
          i == 0 ? "the first class must start at 0" : "class starts must ascend");
    }
    t.thresholds.push_back(start * unit);
    t.fractions.push_back(
        Fraction(RequiredJsonMember(j[i], "fraction", file, at + "."), file, at + ".fraction"));
  }
  return t;
}

}  // namespace

EfficiencyTable EfficiencyTable::FromJson(std::string_view text, const std::string& file) {
  // {"gemm": {"bf16": [{...}]}} nests three levels.
  return FromJsonValue(ParseUntrustedJson(text, file, 8, "an efficiency table"), file, "");
}

EfficiencyTable EfficiencyTable::FromJsonValue(const nlohmann::json& j, const std::string& file,
                                               const std::string& where) {
  if (!j.is_object()) Bad(file, where, "must be an object");
  RefuseUnknownJsonKeys(
      j, {"source", "overlapped_epilogue", "min_kernel_us", "gemm", "attention", "hbm"}, file,
      where);
  EfficiencyTable t;
  if (auto it = j.find("source"); it != j.end() && it->is_string()) {
    t.source_ = it->get<std::string>();
  }
  if (auto it = j.find("overlapped_epilogue"); it != j.end()) {
    if (!it->is_boolean()) Bad(file, where + "overlapped_epilogue", "must be true or false");
    t.overlapped_epilogue_ = it->get<bool>();
  }
  if (auto it = j.find("min_kernel_us"); it != j.end()) {
    const double us = Number(*it, file, where + "min_kernel_us");
    if (us < 0 || us > 1e6) Bad(file, where + "min_kernel_us", "must lie in [0, 1e6]");
    t.min_kernel_seconds_ = us * 1e-6;
  }
  const nlohmann::json& gemm = RequiredJsonMember(j, "gemm", file, where);
  if (!gemm.is_object() || gemm.empty() || gemm.size() > kMaxClasses) {
    Bad(file, where + "gemm", "must map dtype names to class lists");
  }
  for (const auto& [name, classes] : gemm.items()) {
    const std::optional<DType> dtype = ParseDType(name);
    if (!dtype) Bad(file, where + "gemm." + name, "is not a dtype name");
    t.gemm_[*dtype] = ReadClasses(classes, "min_gflop", 1e9, file, where + "gemm." + name);
  }
  const nlohmann::json& attention = RequiredJsonMember(j, "attention", file, where);
  if (!attention.is_object()) Bad(file, where + "attention", "must be an object");
  RefuseUnknownJsonKeys(attention, {"forward_fraction", "backward_fraction"}, file,
                        where + "attention.");
  t.attention_forward_fraction_ =
      Fraction(RequiredJsonMember(attention, "forward_fraction", file, where + "attention."), file,
               where + "attention.forward_fraction");
  t.attention_backward_fraction_ =
      Fraction(RequiredJsonMember(attention, "backward_fraction", file, where + "attention."), file,
               where + "attention.backward_fraction");
  t.hbm_ =
      ReadClasses(RequiredJsonMember(j, "hbm", file, where), "min_mb", 1e6, file, where + "hbm");
  return t;
}

}  // namespace sextant
