// sextant calibrate FILE... : fits a GPU's efficiency table (GEMM size classes per dtype,
// flash-attention forward/backward, memory-bound size classes) to kernels measured with their
// shapes, reports the cost model's error before and after per op class, optionally on held-out
// files (--test), and writes the table for `projection ... --calibration GPU.json`.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "hardware/hardware_library.h"
#include "projection/calibration_file.h"
#include "projection/measured_kernels.h"
#include "report/console_table.h"
#include "report/table.h"
#include "trace/event_store.h"
#include "util/close_matches.h"
#include "util/error.h"
#include "util/file_io.h"

namespace sextant::cli {
namespace {

struct CalibrateArgs {
  std::vector<std::string> files;
  std::vector<std::string> tests;
  std::string gpu_arch;
  std::string output;
  int min_kernels = kDefaultMinKernelsPerClass;
  bool json = false;
  bool per_kernel = false;
  std::vector<std::string> op_classes = {"gemm", "attention", "memory-bound", "floor"};
};

bool Wanted(const CalibrateArgs& a, KernelClass kind) {
  const std::string name = kind == KernelClass::kGemm          ? "gemm"
                           : kind == KernelClass::kMemoryBound ? "memory-bound"
                                                               : "attention";
  return std::find(a.op_classes.begin(), a.op_classes.end(), name) != a.op_classes.end();
}

struct KernelSet {
  std::vector<MeasuredKernel> kernels;
  std::string device_name;  // first named device
  std::string device_file;
  std::string truncated_file;  // a trace that ends early, if any
  int unpriced = 0;
};

KernelSet ReadAll(const std::vector<std::string>& files) {
  KernelSet set;
  for (const std::string& f : files) {
    MeasuredKernelFile m = ReadMeasuredKernels(f);
    // The trace reader's warnings (a file cut short, events it could not time) hold for the
    // fit as they do for a report: the kernels are what the file kept.
    for (const std::string& w : m.warnings)
      std::fprintf(stderr, "sextant: warning: %s\n", WarningAboutFile(f, w).c_str());
    if (m.truncated && set.truncated_file.empty()) set.truncated_file = f;
    if (!m.device_name.empty()) {
      if (set.device_name.empty()) {
        set.device_name = m.device_name;
        set.device_file = f;
      } else if (const GpuSpec* gpu = FindGpuForDevice(m.device_name);
                 gpu != FindGpuForDevice(set.device_name) ||
                 (gpu == nullptr && m.device_name != set.device_name)) {
        // Two devices the library does not hold are the same GPU only by name.
        ThrowUserError(SourceLocation{f}, "",
                       fmt::format("was recorded on '{}', {} on '{}': one calibration is for one "
                                   "GPU",
                                   m.device_name, set.device_file, set.device_name));
      }
    }
    set.unpriced += m.unpriced_ops;
    // One empty file among several would otherwise vanish into the totals.
    if (m.kernels.empty()) {
      std::fprintf(stderr, "sextant: warning: %s: no kernel with a shape to fit on (%s)\n",
                   f.c_str(),
                   m.unpriced_ops > 0 ? "its shaped ops have no cost model"
                                      : "no GPU kernel launched by an op recorded with "
                                        "record_shapes=True, and no table rows");
    }
    for (MeasuredKernel& k : m.kernels) set.kernels.push_back(std::move(k));
  }
  return set;
}

const GpuSpec& ChooseGpu(const std::string& gpu_arch, const KernelSet& set) {
  if (!gpu_arch.empty()) {
    const GpuSpec* gpu = FindGpu(gpu_arch);
    if (gpu == nullptr) {
      ThrowUserError(SourceLocation{"--gpu-arch"}, "",
                     fmt::format("unknown GPU '{}'{} ('sextant hardware list' shows all)", gpu_arch,
                                 DidYouMean(SimilarGpuNames(gpu_arch))));
    }
    // Kernels timed on one GPU say nothing about another's efficiency: a flag that names
    // another GPU than the trace recorded is a mistake, not an override.
    const GpuSpec* recorded = set.device_name.empty() ? nullptr : FindGpuForDevice(set.device_name);
    if (recorded != nullptr && recorded != gpu) {
      ThrowUserError(SourceLocation{set.device_file}, "deviceProperties",
                     fmt::format("was recorded on '{}' ({}), but --gpu-arch says {}: a "
                                 "calibration holds for the GPU its kernels ran on",
                                 set.device_name, recorded->name, gpu->name));
    }
    // A part the library does not hold (H100 NVL) fitted as the named GPU: said, not refused,
    // since --gpu-arch is the only way to fit it at all.
    if (const std::string differs = DeviceMismatch(set.device_name, *gpu);
        recorded == nullptr && !differs.empty()) {
      if (!DeviceMayStandFor(set.device_name, *gpu)) {
        ThrowUserError(SourceLocation{set.device_file}, "deviceProperties",
                       differs + ": a calibration holds for the GPU its kernels ran on");
      }
      std::fprintf(stderr, "sextant: warning: %s %s: its kernels are fitted as the %s's\n",
                   set.device_file.c_str(), differs.c_str(), gpu->name.c_str());
    }
    return *gpu;
  }
  if (set.device_name.empty()) {
    if (!set.truncated_file.empty()) {
      ThrowUserError(SourceLocation{set.truncated_file}, "",
                     "ends early, before the deviceProperties that name its GPU: give the GPU "
                     "with --gpu-arch");
    }
    ThrowUserError(
        "the files do not name their GPU (TraceLens and timing tables never do): give it with "
        "--gpu-arch");
  }
  if (const GpuSpec* gpu = FindGpuForDevice(set.device_name)) return *gpu;
  ThrowUserError(SourceLocation{set.device_file}, "deviceProperties",
                 fmt::format("device '{}' is not in the GPU library: give it with --gpu-arch",
                             set.device_name));
}

Cell Pct(double fraction) { return fraction * 100; }

// The "used" cell: why a class or the floor kept its default.
std::string NotFittedReason(bool fitted, bool asked, int fit_on, int min_kernels,
                            std::string_view then = "") {
  if (fitted) return "yes";
  const std::string why = !asked                 ? "not in --op-classes"
                          : fit_on < min_kernels ? fmt::format("fit on < {}", min_kernels)
                                                 : "no value changes a prediction";
  return fmt::format("no ({}){}", why, then);
}

Table FitTable(const EfficiencyFit& fit, int min_kernels) {
  Table t("fit", "Efficiency classes (fraction of the dtype's dense peak, or of HBM bandwidth)",
          {{"class", "op class"},
           {"dtype", "dtype"},
           {"from", "from"},
           {"kernels", "kernels"},
           {"fit_on", "fit on"},
           {"default", "default", 3},
           {"fitted", "fitted", 3},
           {"used", "used"}});
  for (const FittedClass& c : fit.classes) {
    Cell from;
    if (c.kind == KernelClass::kGemm) from = fmt::format("{:g} GFLOP", c.min_size);
    if (c.kind == KernelClass::kMemoryBound) from = fmt::format("{:g} MB", c.min_size);
    t.AddRow({std::string(KernelClassName(c.kind)),
              c.kind == KernelClass::kGemm ? Cell(std::string(DTypeName(c.dtype))) : Cell(), from,
              int64_t{c.kernels}, int64_t{c.work_bound}, c.fraction_before, c.fraction_after,
              NotFittedReason(c.fitted, c.asked, c.work_bound, min_kernels,
                              c.kind == KernelClass::kGemm && !fit.table.HasOwnGemmTable(c.dtype)
                                  ? "; reads the bf16 table"
                              : c.fraction_after != c.fraction_before
                                  ? "; moved between the fitted classes"
                                  : "")});
  }
  t.AddRow({std::string("launch floor (us)"), Cell(), Cell(), int64_t{fit.usable_kernels},
            int64_t{fit.floor_kernels}, fit.floor_before * 1e6, fit.floor_after * 1e6,
            NotFittedReason(fit.floor_fitted, fit.floor_asked, fit.floor_kernels, min_kernels)});
  t.AddNote(
      "fitted: least absolute deviation on log time of the cost model's prediction (launch floor "
      "and HBM roofline included), the floor and the classes in turn; a class not fitted keeps "
      "its default, moved where needed between the fitted classes below and above it so that "
      "efficiency does not fall as work grows");
  t.AddNote(fmt::format(
      "fit on: a kernel whose priced work is under {:.0f}% of its measured time informs the "
      "launch floor if it is shorter than {:g} default floors, its class if it runs {:g} "
      "floors or longer, and nothing in between ({} such kernel{}); the others inform their "
      "class alone",
      kWorkBoundShare * 100, kLaunchBoundFloors, kSlowWorkFloors, fit.unexplained_kernels,
      fit.unexplained_kernels == 1 ? "" : "s"));
  return t;
}

Table ErrorTable(const std::string& name, const std::string& title,
                 const std::vector<ClassError>& errors) {
  Table t(name, title,
          {{"class", "op class"},
           {"kernels", "kernels"},
           {"median_default_pct", "median error, default (%)", 1},
           {"median_fitted_pct", "median error, fitted (%)", 1},
           {"mean_default_pct", "mean error, default (%)", 1},
           {"mean_fitted_pct", "mean error, fitted (%)", 1}});
  for (const ClassError& e : errors) {
    t.AddRow({std::string(KernelClassName(e.kind)), int64_t{e.kernels}, Pct(e.median_before),
              Pct(e.median_after), Pct(e.mean_before), Pct(e.mean_after)});
  }
  t.AddNote("error = |predicted / measured - 1| per distinct (op, shapes, dtype)");
  for (const ClassError& e : errors) {
    // The fit minimises the absolute log error over kernels, not this median; on a handful of
    // kernels the two can disagree, and the user should know before using the file.
    if (e.median_after > e.median_before * 1.001) {
      t.AddNote(fmt::format(
          "warning: {} kernels are predicted worse by the fitted table than by the default "
          "(median error {:.1f}% -> {:.1f}%); check them with --per-kernel before using it",
          KernelClassName(e.kind), e.median_before * 100, e.median_after * 100));
    }
  }
  return t;
}

std::string ShapeText(const MeasuredKernel& k) {
  switch (k.kind) {
    case KernelClass::kGemm:
      return fmt::format("{}x{}x{}{}", k.gemm.m, k.gemm.n, k.gemm.k,
                         k.gemm.batch > 1 ? fmt::format(" x{}", k.gemm.batch) : "");
    case KernelClass::kAttentionForward:
    case KernelClass::kAttentionBackward: {
      const AttentionShape& a = k.attention;
      return fmt::format("b{} h{}/{} s{} d{}/{}{}", a.batch, a.q_heads, a.kv_heads, a.seq,
                         a.head_dim_qk, a.head_dim_v, a.causal ? " causal" : "");
    }
    case KernelClass::kMemoryBound: return fmt::format("{:.3f} MB", k.bytes / 1e6);
  }
  return "";
}

// Every kernel with what each table predicts for it: where a class's error comes from.
Table KernelTable(const std::string& name, const std::string& title, const GpuSpec& gpu,
                  const EfficiencyTable& before, const EfficiencyTable& after,
                  const std::vector<MeasuredKernel>& kernels) {
  Table t(name, title,
          {{"class", "op class"},
           {"dtype", "dtype"},
           {"shape", "shape (MxNxK, attention, bytes)"},
           {"calls", "calls"},
           {"measured_us", "measured (us)", 2},
           {"default_us", "default (us)", 2},
           {"fitted_us", "fitted (us)", 2},
           {"fitted_error_pct", "fitted error (%)", 1},
           {"informs", "informs"},
           {"origin", "op"}});
  for (const MeasuredKernel& k : kernels) {
    if (!CanPredict(gpu, k)) continue;
    const double fitted = PredictSeconds(gpu, after, k);
    // What the fit took this kernel's time as evidence of (ClassifyKernel at the default table).
    std::string informs;
    switch (ClassifyKernel(gpu, before, k)) {
      case KernelBound::kWork: informs = "its class"; break;
      case KernelBound::kLaunch: informs = "launch floor"; break;
      case KernelBound::kUnexplained: informs = "nothing"; break;
    }
    t.AddRow({std::string(KernelClassName(k.kind)), std::string(DTypeName(k.dtype)), ShapeText(k),
              k.calls, k.seconds * 1e6, PredictSeconds(gpu, before, k) * 1e6, fitted * 1e6,
              (fitted / k.seconds - 1) * 100, informs, k.origin});
  }
  t.AddNote(fmt::format(
      "informs: what a kernel's time was fitted to. Its class when the priced work explains >= "
      "{:g}% of it or it runs >= {:g} launch floors; the launch floor when shorter than {:g} "
      "floors; nothing in between (little priced work, yet several floors long)",
      kWorkBoundShare * 100, kSlowWorkFloors, kLaunchBoundFloors));
  return t;
}

nlohmann::json ErrorsJson(const std::vector<ClassError>& errors) {
  nlohmann::json out = nlohmann::json::array();
  for (const ClassError& e : errors) {
    out.push_back({{"class", std::string(KernelClassName(e.kind))},
                   {"kernels", e.kernels},
                   {"median_error_default_pct", e.median_before * 100},
                   {"median_error_fitted_pct", e.median_after * 100},
                   {"mean_error_default_pct", e.mean_before * 100},
                   {"mean_error_fitted_pct", e.mean_after * 100}});
  }
  return out;
}

void Run(const CalibrateArgs& a) {
  std::vector<std::string> inputs = a.files;
  inputs.insert(inputs.end(), a.tests.begin(), a.tests.end());
  // Refused before any trace is read, not after minutes of work.
  if (!a.output.empty()) RefuseOverwritingInput(a.output, inputs);
  // A file given twice counts its kernels twice (past --min-kernels), and one both fitted on and
  // held out is not held out.
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = i + 1; j < inputs.size(); ++j) {
      if (!SameFile(inputs[i], inputs[j])) continue;
      const bool fit_i = i < a.files.size(), fit_j = j < a.files.size();
      ThrowUserError(SourceLocation{inputs[j]}, "",
                     fit_i && !fit_j
                         ? fmt::format("is fitted on and held out (--test): the same "
                                       "file as {}",
                                       inputs[i])
                         : fmt::format("is the same file as {}: give each file once", inputs[i]));
    }
  }
  const KernelSet fit_set = ReadAll(a.files);
  const GpuSpec& gpu = ChooseGpu(a.gpu_arch, fit_set);
  const EfficiencyTable base = EfficiencyTable::Default(gpu);
  CalibrationFile file;
  file.gpu = gpu.name;
  file.sources = a.files;
  file.min_kernels = a.min_kernels;
  // Every kernel is classified and reported; --op-classes says which parameters move (the
  // floor's kernels are those of every class).
  std::vector<KernelClass> kinds;
  for (KernelClass kind : kAllKernelClasses) {
    if (Wanted(a, kind)) kinds.push_back(kind);
  }
  const bool fit_floor =
      std::find(a.op_classes.begin(), a.op_classes.end(), "floor") != a.op_classes.end();
  file.fit = FitEfficiencyTable(gpu, base, fit_set.kernels, a.min_kernels, fit_floor, kinds);
  std::vector<ClassError> held_out;
  KernelSet test_set;
  if (!a.tests.empty()) {
    test_set = ReadAll(a.tests);
    if (!test_set.device_name.empty() && FindGpuForDevice(test_set.device_name) != &gpu) {
      ThrowUserError(SourceLocation{test_set.device_file}, "",
                     fmt::format("--test file was recorded on '{}', the fit is for {}",
                                 test_set.device_name, gpu.name));
    }
    held_out = CompareTables(gpu, base, file.fit.table, test_set.kernels);
  }
  const std::string calibration_json = CalibrationFileJson(file);
  if (!a.output.empty()) WriteFileAtomically(a.output, calibration_json, inputs);
  if (a.json) {
    nlohmann::json j = nlohmann::json::parse(calibration_json);
    if (!a.tests.empty()) {
      j["held_out"] = {{"files", a.tests}, {"errors", ErrorsJson(held_out)}};
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format(
      "{} efficiency fitted on {} measured kernels with shapes from {} file(s){}\n\n", gpu.name,
      file.fit.usable_kernels, a.files.size(),
      fit_set.unpriced > 0
          ? fmt::format(" ({} shaped ops without a cost model left out)", fit_set.unpriced)
          : "");
  std::cout << RenderConsoleTable(FitTable(file.fit, a.min_kernels)) << "\n";
  std::cout << RenderConsoleTable(
                   ErrorTable("errors", "Cost-model error on the fitted kernels", file.fit.errors))
            << "\n";
  if (a.per_kernel) {
    std::cout << RenderConsoleTable(KernelTable("kernels", "Fitted kernels", gpu, base,
                                                file.fit.table, fit_set.kernels),
                                    90)
              << "\n";
  }
  if (!a.tests.empty()) {
    if (a.per_kernel) {
      std::cout << RenderConsoleTable(KernelTable("held_out_kernels", "Held-out kernels", gpu, base,
                                                  file.fit.table, test_set.kernels),
                                      90)
                << "\n";
    }
    std::cout << RenderConsoleTable(ErrorTable(
                     "held_out",
                     fmt::format("Cost-model error on held-out kernels ({} file(s) not fitted on)",
                                 a.tests.size()),
                     held_out))
              << "\n";
  }
  if (!a.output.empty()) {
    std::cout << fmt::format(
        "Calibration written to {} (use: sextant projection performance "
        "... --calibration {})\n",
        a.output, a.output);
  }
}

}  // namespace

void AddCalibrateCommand(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "fit the GPU's efficiency tables to measured kernels with known shapes (profiler traces "
      "recorded with record_shapes=True, TraceLens GEMM.csv / SDPA_fwd.csv, GEMM timings)");
  cmd->add_option("files", args->files, "traces or tables to fit on")->required();
  cmd->add_option("--test", args->tests,
                  "traces or tables to score the fit on without fitting to them (held out)");
  cmd->add_option("--gpu-arch", args->gpu_arch,
                  "GPU the kernels ran on (default: the trace's device)");
  cmd->add_option("-o,--output", args->output, "write the calibration file (JSON)");
  cmd->add_option("--min-kernels", args->min_kernels,
                  fmt::format("fewest kernels a class needs to be fitted (default {})",
                              kDefaultMinKernelsPerClass))
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--op-classes", args->op_classes,
                  "what to fit (default all): gemm, attention, memory-bound, floor (the launch "
                  "floor); the rest keeps the GPU's default")
      ->delimiter(',')
      ->check(CLI::IsMember({"gemm", "attention", "memory-bound", "floor"}));
  cmd->add_flag("--json", args->json, "print the calibration file's JSON");
  cmd->add_flag("--per-kernel", args->per_kernel,
                "list every kernel with its measured time and both tables' predictions");
  cmd->callback([args] { Run(*args); });
}

}  // namespace sextant::cli
