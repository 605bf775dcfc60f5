#include "cost/efficiency_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "cost/memory_bound_model.h"
#include "util/error.h"

namespace sextant {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string_view KernelClassName(KernelClass kind) {
  switch (kind) {
    case KernelClass::kGemm: return "GEMM";
    case KernelClass::kAttentionForward: return "attention fwd";
    case KernelClass::kAttentionBackward: return "attention bwd";
    case KernelClass::kMemoryBound: return "memory-bound";
  }
  return "?";
}

bool CanPredict(const GpuSpec& gpu, const MeasuredKernel& k) {
  if (!(k.seconds > 0) || !std::isfinite(k.seconds)) return false;
  switch (k.kind) {
    case KernelClass::kGemm:
      return gpu.Supports(k.dtype) && k.gemm.m > 0 && k.gemm.n > 0 && k.gemm.k > 0 &&
             k.gemm.batch > 0;
    case KernelClass::kAttentionForward:
    case KernelClass::kAttentionBackward: {
      const AttentionShape& a = k.attention;
      return gpu.Supports(k.dtype) && a.batch > 0 && a.q_heads > 0 && a.kv_heads > 0 && a.seq > 0 &&
             a.head_dim_qk > 0 && a.head_dim_v > 0 && a.cp >= 1;
    }
    case KernelClass::kMemoryBound: return k.bytes > 0 && gpu.hbm_bandwidth > 0;
  }
  return false;
}

double PredictSeconds(const GpuSpec& gpu, const EfficiencyTable& table, const MeasuredKernel& k) {
  switch (k.kind) {
    case KernelClass::kGemm: return GemmModel(gpu, table).Time(k.gemm, k.dtype);
    case KernelClass::kAttentionForward:
      return AttentionModel(gpu, table).Forward(k.attention, k.dtype).seconds;
    case KernelClass::kAttentionBackward:
      return AttentionModel(gpu, table).Backward(k.attention, k.dtype).seconds;
    case KernelClass::kMemoryBound: return MemoryBoundModel(gpu, table).Time(k.bytes);
  }
  return 0;
}

namespace {

// Everything a kernel's predicted time depends on besides the table: kernels with equal keys
// (a GEMM table with a row per measurement of the same shape) are priced once.
using ShapeKey = std::tuple<KernelClass, DType, int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t, bool, int64_t, int, double>;

ShapeKey ShapeOf(const MeasuredKernel& k) {
  switch (k.kind) {
    case KernelClass::kGemm:
      return {k.kind, k.dtype, k.gemm.m, k.gemm.n, k.gemm.k, k.gemm.batch, 0, 0, false, 0, 0, 0.0};
    case KernelClass::kAttentionForward:
    case KernelClass::kAttentionBackward: {
      const AttentionShape& a = k.attention;
      return {k.kind,        k.dtype,      a.batch,  a.q_heads, a.kv_heads, a.seq,
              a.head_dim_qk, a.head_dim_v, a.causal, a.window,  a.cp,       0.0};
    }
    case KernelClass::kMemoryBound: break;
  }
  return {k.kind, k.dtype, 0, 0, 0, 0, 0, 0, false, 0, 0, k.bytes};
}

}  // namespace

std::vector<ClassError> CompareTables(const GpuSpec& gpu, const EfficiencyTable& before,
                                      const EfficiencyTable& after,
                                      const std::vector<MeasuredKernel>& kernels) {
  std::map<KernelClass, std::pair<std::vector<double>, std::vector<double>>> errors;
  std::map<ShapeKey, std::pair<double, double>> predicted;  // (before, after) per shape
  for (const MeasuredKernel& k : kernels) {
    if (!CanPredict(gpu, k)) continue;
    auto [it, inserted] = predicted.try_emplace(ShapeOf(k));
    if (inserted) it->second = {PredictSeconds(gpu, before, k), PredictSeconds(gpu, after, k)};
    auto& [b, a] = errors[k.kind];
    b.push_back(std::abs(it->second.first / k.seconds - 1));
    a.push_back(std::abs(it->second.second / k.seconds - 1));
  }
  std::vector<ClassError> out;
  for (const auto& [kind, e] : errors) {
    ClassError c;
    c.kind = kind;
    c.kernels = static_cast<int>(e.first.size());
    c.median_before = Median(e.first);
    c.median_after = Median(e.second);
    for (size_t i = 0; i < e.first.size(); ++i) {
      c.mean_before += e.first[i] / c.kernels;
      c.mean_after += e.second[i] / c.kernels;
    }
    out.push_back(c);
  }
  return out;
}

namespace {

using ClassKey = std::tuple<KernelClass, DType, int>;

// `table` with one class's fraction replaced.
EfficiencyTable WithFraction(const EfficiencyTable& table, const ClassKey& key, double fraction) {
  const auto [kind, dtype, size_class] = key;
  EfficiencyTable t = table;
  switch (kind) {
    case KernelClass::kGemm: {
      SizeClassTable g = t.GemmTable(dtype);
      g.fractions[size_class] = fraction;
      t.SetGemmTable(dtype, g);
      break;
    }
    case KernelClass::kAttentionForward:
      t.SetAttentionFractions(fraction, t.attention_backward_fraction());
      break;
    case KernelClass::kAttentionBackward:
      t.SetAttentionFractions(t.attention_forward_fraction(), fraction);
      break;
    case KernelClass::kMemoryBound: {
      SizeClassTable h = t.hbm_table();
      h.fractions[size_class] = fraction;
      t.SetHbmTable(h);
      break;
    }
  }
  return t;
}

double CurrentFraction(const EfficiencyTable& t, const ClassKey& key) {
  const auto [kind, dtype, size_class] = key;
  switch (kind) {
    case KernelClass::kGemm: return t.GemmTable(dtype).fractions[size_class];
    case KernelClass::kAttentionForward: return t.attention_forward_fraction();
    case KernelClass::kAttentionBackward: return t.attention_backward_fraction();
    case KernelClass::kMemoryBound: return t.hbm_table().fractions[size_class];
  }
  return 1;
}

// A class's kernels with each distinct shape priced once per table: a GEMM timing table may
// repeat one shape over many rows. The loss still visits every kernel, in the given order and
// with the same arithmetic, so the fit is the one the kernels listed one by one give.
struct PricedKernels {
  std::vector<const MeasuredKernel*> kernels;
  std::vector<size_t> shape_of;               // per kernel: its index in `shapes`
  std::vector<const MeasuredKernel*> shapes;  // one kernel per distinct shape
};

PricedKernels GroupByShape(const std::vector<const MeasuredKernel*>& kernels) {
  PricedKernels out;
  std::map<ShapeKey, size_t> index;
  out.kernels = kernels;
  for (const MeasuredKernel* k : kernels) {
    auto [it, inserted] = index.try_emplace(ShapeOf(*k), out.shapes.size());
    if (inserted) out.shapes.push_back(k);
    out.shape_of.push_back(it->second);
  }
  return out;
}

// Sum of absolute log errors of the kernels of `groups` under `table`. Absolute rather than
// squared: a few kernels of a class run far off any bandwidth or FLOP rate (broadcast or
// strided elementwise ops, batched GEMMs of a few rows), and a squared loss lets them drag the
// whole class; the absolute loss gives the class's median ratio when its kernels scale with
// the fraction.
double LogAbsoluteError(const GpuSpec& gpu, const EfficiencyTable& table,
                        const PricedKernels& priced) {
  std::vector<double> predicted(priced.shapes.size());
  for (size_t j = 0; j < priced.shapes.size(); ++j)
    predicted[j] = PredictSeconds(gpu, table, *priced.shapes[j]);
  double sum = 0;
  for (size_t i = 0; i < priced.kernels.size(); ++i) {
    sum += std::abs(std::log(predicted[priced.shape_of[i]] / priced.kernels[i]->seconds));
  }
  return sum;
}

// The value in [lo, hi] of one table parameter (`with(table, v)` sets it) that minimises the
// absolute log error of `kernels` as the cost model charges them (launch floor and HBM roofline
// included): a geometric grid, then a golden-section search between the best point's
// neighbours. nullopt when no value changes a prediction (e.g. every kernel of a class sits on
// the launch floor: the class is not measurable from these kernels).
template <typename With>
std::optional<double> BestValue(const GpuSpec& gpu, const EfficiencyTable& table, With with,
                                double lo, double hi, const PricedKernels& kernels) {
  constexpr int kPoints = 121;
  const double log_lo = std::log(lo), log_hi = std::log(hi);
  auto at = [&](int i) { return log_lo + (log_hi - log_lo) * i / (kPoints - 1); };
  auto cost = [&](double log_v) {
    return LogAbsoluteError(gpu, with(table, std::exp(log_v)), kernels);
  };
  std::vector<double> costs(kPoints);
  int best = 0;
  for (int i = 0; i < kPoints; ++i) {
    costs[i] = cost(at(i));
    if (costs[i] < costs[best]) best = i;
  }
  if (*std::max_element(costs.begin(), costs.end()) - costs[best] < 1e-12) return std::nullopt;
  double a = at(std::max(0, best - 1)), b = at(std::min(kPoints - 1, best + 1));
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int iter = 0; iter < 40; ++iter) {
    const double x = b - g * (b - a), y = a + g * (b - a);
    if (cost(x) < cost(y)) {
      b = y;
    } else {
      a = x;
    }
  }
  return std::exp(0.5 * (a + b));
}

}  // namespace

double WorkShare(const GpuSpec& gpu, const EfficiencyTable& table, const MeasuredKernel& k) {
  EfficiencyTable no_floor = table;
  no_floor.set_min_kernel_seconds(0);
  return PredictSeconds(gpu, no_floor, k) / k.seconds;
}

namespace {

// ClassifyKernel given the kernel's predicted time with no launch floor.
KernelBound ClassifyByWork(const EfficiencyTable& table, const MeasuredKernel& k,
                           double work_seconds) {
  const double floors = k.seconds / table.min_kernel_seconds();  // inf without a floor
  if (work_seconds / k.seconds >= kWorkBoundShare || floors >= kSlowWorkFloors) {
    return KernelBound::kWork;
  }
  return floors < kLaunchBoundFloors ? KernelBound::kLaunch : KernelBound::kUnexplained;
}

}  // namespace

KernelBound ClassifyKernel(const GpuSpec& gpu, const EfficiencyTable& table,
                           const MeasuredKernel& k) {
  EfficiencyTable no_floor = table;
  no_floor.set_min_kernel_seconds(0);
  return ClassifyByWork(table, k, PredictSeconds(gpu, no_floor, k));
}

namespace {

EfficiencyTable WithFloor(const EfficiencyTable& table, double seconds) {
  EfficiencyTable t = table;
  t.set_min_kernel_seconds(seconds);
  return t;
}

}  // namespace

EfficiencyFit FitEfficiencyTable(const GpuSpec& gpu, const EfficiencyTable& base,
                                 const std::vector<MeasuredKernel>& kernels, int min_kernels,
                                 bool fit_floor, const std::vector<KernelClass>& fit_kinds) {
  if (min_kernels < 1) ThrowUserError("--min-kernels must be at least 1");
  auto asked = [&](KernelClass kind) {
    return std::find(fit_kinds.begin(), fit_kinds.end(), kind) != fit_kinds.end();
  };
  // The kernels of each (op class, dtype, size class), and of those the ones whose time is
  // mostly work (they inform the class); the rest inform the launch floor.
  std::map<ClassKey, std::vector<const MeasuredKernel*>> classes, work_bound;
  std::vector<const MeasuredKernel*> floor_bound;
  EfficiencyFit fit;
  EfficiencyTable no_floor = base;
  no_floor.set_min_kernel_seconds(0);
  std::map<ShapeKey, double> work_seconds;  // predicted at `base` with no floor, per shape
  for (const MeasuredKernel& k : kernels) {
    if (!CanPredict(gpu, k)) continue;
    ++fit.usable_kernels;
    int size_class = 0;
    DType dtype = k.dtype;
    if (k.kind == KernelClass::kGemm) {
      const double flops = 2.0 * k.gemm.m * k.gemm.n * k.gemm.k * k.gemm.batch;
      size_class = base.GemmTable(k.dtype).ClassOf(flops);
    } else {
      dtype = DType::kBF16;  // one attention pair and one HBM ramp per GPU
      if (k.kind == KernelClass::kMemoryBound) size_class = base.hbm_table().ClassOf(k.bytes);
    }
    const ClassKey key{k.kind, dtype, size_class};
    classes[key].push_back(&k);
    auto [work, inserted] = work_seconds.try_emplace(ShapeOf(k), 0.0);
    if (inserted) work->second = PredictSeconds(gpu, no_floor, k);
    switch (ClassifyByWork(base, k, work->second)) {
      case KernelBound::kLaunch: floor_bound.push_back(&k); break;
      case KernelBound::kWork: work_bound[key].push_back(&k); break;
      case KernelBound::kUnexplained: ++fit.unexplained_kernels; break;
    }
  }
  fit.floor_kernels = static_cast<int>(floor_bound.size());
  const PricedKernels floor_groups = GroupByShape(floor_bound);
  std::map<ClassKey, PricedKernels> work_groups;
  for (const auto& [key, members] : work_bound) work_groups[key] = GroupByShape(members);
  fit.floor_asked = fit_floor;
  // Coordinate descent: the launch floor and the classes are fitted in turn, twice: a class's
  // kernels still pay the floor where it is the larger time.
  fit.table = base;
  fit.floor_before = base.min_kernel_seconds();
  std::map<ClassKey, std::optional<double>> best;
  bool floor_fitted = false;
  for (int pass = 0; pass < 2; ++pass) {
    if (fit_floor && static_cast<int>(floor_bound.size()) >= min_kernels) {
      // From 0.1 us (the B200 eager trace in the corpus has copies of 0.8 us) to 100 us.
      if (auto floor = BestValue(gpu, fit.table, WithFloor, 1e-7, 1e-4, floor_groups)) {
        fit.table = WithFloor(fit.table, *floor);
        floor_fitted = true;
      }
    }
    for (const auto& [key, members] : work_bound) {
      if (!asked(std::get<0>(key)) || static_cast<int>(members.size()) < min_kernels) continue;
      const ClassKey this_class = key;  // a structured binding cannot be captured (C++17)
      auto with = [this_class](const EfficiencyTable& t, double f) {
        return WithFraction(t, this_class, f);
      };
      best[key] = BestValue(gpu, fit.table, with, kMinEfficiencyFraction, 1.0, work_groups.at(key));
      if (best[key]) fit.table = WithFraction(fit.table, key, *best[key]);
    }
  }
  fit.floor_after = fit.table.min_kernel_seconds();
  fit.floor_fitted = floor_fitted;
  // A class left at its default can sit below a fitted smaller class or above a fitted larger
  // one, so that a GEMM four times the size is predicted slower (H100: 141x512x512 fitted to
  // 0.31 of peak, the next class kept at 0.075). Efficiency does not fall as work grows
  // (larger tiles fill more of the GPU per wave): each default is moved between its fitted
  // neighbours, the smaller one winning where they disagree.
  auto monotone = [&](const SizeClassTable& classes, KernelClass kind, DType dtype) {
    SizeClassTable out = classes;
    const int n = static_cast<int>(classes.fractions.size());
    auto fitted = [&](int i) {
      const auto it = best.find(ClassKey{kind, dtype, i});
      return it != best.end() && it->second.has_value();
    };
    for (int i = 0; i < n; ++i) {
      if (fitted(i)) continue;
      double lo = 0, hi = 1;
      for (int j = 0; j < i; ++j) {
        if (fitted(j)) lo = std::max(lo, classes.fractions[j]);
      }
      for (int j = i + 1; j < n; ++j) {
        if (fitted(j)) hi = std::min(hi, classes.fractions[j]);
      }
      out.fractions[i] = std::max(lo, std::min(out.fractions[i], hi));
    }
    return out;
  };
  for (const auto& [key, value] : best) {
    if (!value) continue;
    const auto [kind, dtype, size_class] = key;
    if (kind == KernelClass::kGemm) {
      fit.table.SetGemmTable(dtype, monotone(fit.table.GemmTable(dtype), kind, dtype));
    } else if (kind == KernelClass::kMemoryBound) {
      fit.table.SetHbmTable(monotone(fit.table.hbm_table(), kind, DType::kBF16));
    }
  }
  int fitted = 0;
  for (const auto& [key, members] : classes) {
    const auto [kind, dtype, size_class] = key;
    FittedClass c;
    c.kind = kind;
    c.dtype = dtype;
    c.kernels = static_cast<int>(members.size());
    if (auto it = work_bound.find(key); it != work_bound.end()) {
      c.work_bound = static_cast<int>(it->second.size());
    }
    c.asked = asked(kind);
    c.fraction_before = CurrentFraction(base, key);
    if (kind == KernelClass::kGemm) {
      c.min_size = base.GemmTable(dtype).thresholds[size_class] / 1e9;
    } else if (kind == KernelClass::kMemoryBound) {
      c.min_size = base.hbm_table().thresholds[size_class] / 1e6;
    }
    c.fitted = best.count(key) && best[key].has_value();
    // A class not fitted may still have moved between its fitted neighbours (above).
    c.fraction_after = CurrentFraction(fit.table, key);
    fitted += c.fitted;
    fit.classes.push_back(c);
  }
  if (fitted == 0 && !fit.floor_fitted) {
    // More traces help only when the shaped kernels are what is missing.
    ThrowUserError(fmt::format(
        "nothing to fit on {0}: no efficiency class has {1} or more kernels whose time is "
        "mostly the work it prices, and fewer than {1} are launch-bound for the launch floor ({2} "
        "usable kernels with shapes, {3} launch-bound); {4}",
        gpu.name, min_kernels, fit.usable_kernels, fit.floor_kernels,
        fit.usable_kernels >= min_kernels
            ? "lower --min-kernels, or widen --op-classes"
            : "lower --min-kernels, or give traces recorded with record_shapes=True"));
  }
  fit.table.set_source(
      fmt::format("{} table fitted on {} measured kernels", gpu.name, fit.usable_kernels));
  fit.errors = CompareTables(gpu, base, fit.table, kernels);
  return fit;
}

}  // namespace sextant
