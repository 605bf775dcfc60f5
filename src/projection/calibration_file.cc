#include "projection/calibration_file.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "hardware/hardware_library.h"
#include "projection/measured_kernels.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/json_input.h"

namespace sextant {
namespace {

constexpr const char* kFormat = "sextant-calibration";

nlohmann::ordered_json Pct(double fraction) { return std::round(fraction * 1000) / 10; }

}  // namespace

std::string CalibrationFileJson(const CalibrationFile& c) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kCalibrationFileVersion;
  j["gpu"] = c.gpu;
  j["sources"] = c.sources;
  j["min_kernels"] = c.min_kernels;
  nlohmann::ordered_json fit = nlohmann::ordered_json::array();
  for (const FittedClass& f : c.fit.classes) {
    nlohmann::ordered_json row;
    row["class"] = std::string(KernelClassName(f.kind));
    if (f.kind == KernelClass::kGemm) row["dtype"] = std::string(DTypeName(f.dtype));
    if (f.kind == KernelClass::kGemm || f.kind == KernelClass::kMemoryBound) {
      row["from"] = f.min_size;
      row["unit"] = f.kind == KernelClass::kGemm ? "GFLOP" : "MB";
    }
    row["kernels"] = f.kernels;
    row["fit_on"] = f.work_bound;  // the kernels whose time is their work
    row["default"] = f.fraction_before;
    row["fitted"] = f.fraction_after;
    row["used"] = f.fitted;
    fit.push_back(row);
  }
  j["fit"] = fit;
  j["launch_floor_us"] = {{"default", c.fit.floor_before * 1e6},
                          {"fitted", c.fit.floor_after * 1e6},
                          {"used", c.fit.floor_fitted},
                          {"fit_on", c.fit.floor_kernels}};
  j["unexplained_kernels"] = c.fit.unexplained_kernels;
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const ClassError& e : c.fit.errors) {
    errors.push_back({{"class", std::string(KernelClassName(e.kind))},
                      {"kernels", e.kernels},
                      {"median_error_default_pct", Pct(e.median_before)},
                      {"median_error_fitted_pct", Pct(e.median_after)},
                      {"mean_error_default_pct", Pct(e.mean_before)},
                      {"mean_error_fitted_pct", Pct(e.mean_after)}});
  }
  j["errors"] = errors;
  j["table"] = nlohmann::ordered_json::parse(c.fit.table.ToJson());
  return j.dump(2) + "\n";
}

bool LooksLikeCalibrationFile(std::string_view head) {
  return head.find(std::string("\"") + kFormat + "\"") != std::string_view::npos;
}

CalibrationFile ParseCalibrationFile(std::string_view text, const std::string& file) {
  // The table nests four levels inside the file's object.
  const nlohmann::json j = ParseUntrustedJson(text, file, 8, "a calibration file");
  const SourceLocation where{file};
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    ThrowUserError(
        where, "format",
        fmt::format("is not \"{}\": not a file written by `sextant calibrate`", kFormat));
  }
  if (!j.contains("version") || !j["version"].is_number_integer()) {
    ThrowUserError(where, "version", "is missing or not an integer");
  }
  const auto version = j["version"].get<int64_t>();
  if (version < 1 || version > kCalibrationFileVersion) {
    ThrowUserError(where, "version",
                   fmt::format("{} is not a version this program reads (1 to {})", version,
                               kCalibrationFileVersion));
  }
  if (!j.contains("gpu") || !j["gpu"].is_string() || j["gpu"].get<std::string>().empty()) {
    ThrowUserError(where, "gpu", "must name the GPU the table was fitted on");
  }
  CalibrationFile c;
  c.gpu = j["gpu"].get<std::string>();
  if (auto it = j.find("sources"); it != j.end() && it->is_array()) {
    for (const auto& s : *it) {
      if (s.is_string()) c.sources.push_back(s.get<std::string>());
    }
  }
  if (!j.contains("table")) ThrowUserError(where, "table", "is missing");
  c.fit.table = EfficiencyTable::FromJsonValue(j["table"], file, "table.");
  return c;
}

EfficiencyTable CalibratedTable(const std::string& path, const GpuSpec& gpu, std::string* source,
                                std::vector<std::string>* warnings) {
  // A calibration file is small JSON; a trace may be gigabytes, so look at its head first.
  if (LooksLikeCalibrationFile(ReadFileHead(path, 512))) {
    const CalibrationFile c = ParseCalibrationFile(ReadFile(path, int64_t{16} << 20), path);
    const GpuSpec* fitted_on = FindGpu(c.gpu);
    if (fitted_on == nullptr || fitted_on->name != gpu.name) {
      ThrowUserError(SourceLocation{path}, "gpu",
                     fmt::format("the table was fitted on {}, the job runs on {}: fit one on "
                                 "{} kernels (`sextant calibrate`) or leave --calibration out",
                                 c.gpu, gpu.name, gpu.name));
    }
    *source = fmt::format("{} table from {} (fitted on {})", gpu.name, path,
                          c.sources.empty() ? std::string("unnamed files")
                                            : fmt::format("{}", fmt::join(c.sources, ", ")));
    EfficiencyTable t = c.fit.table;
    t.set_source(*source);
    return t;
  }
  const MeasuredKernelFile measured = ReadMeasuredKernels(path);
  // Kernels timed on one GPU say nothing of another's efficiency, as `sextant calibrate` holds.
  if (const std::string differs = DeviceMismatch(measured.device_name, gpu); !differs.empty()) {
    if (!DeviceMayStandFor(measured.device_name, gpu)) {
      const GpuSpec* recorded = FindGpuForDevice(measured.device_name);
      ThrowUserError(
          SourceLocation{path}, "deviceProperties",
          fmt::format(
              "{}: a calibration holds for the GPU its kernels ran on ({}fit "
              "on {} kernels)",
              differs,
              recorded ? fmt::format("project --gpu-arch {}, or ", recorded->name) : std::string(),
              gpu.name));
    }
    // A part the library does not hold of this GPU's chip: fitted as this GPU's.
    if (warnings != nullptr) {
      warnings->push_back(fmt::format("--calibration {} {}: its kernels are fitted as the {}'s",
                                      path, differs, gpu.name));
    }
  }
  // A trace's kernels are whatever its run launched: the same guard as `sextant calibrate`
  // against fitting a class on one incidental call. A timing table's rows are the shapes its
  // author measured on purpose: every class with a row is fitted.
  const int min_kernels = measured.from_trace ? kDefaultMinKernelsPerClass : 1;
  EfficiencyFit fit;
  try {
    fit = FitEfficiencyTable(gpu, EfficiencyTable::Default(gpu), measured.kernels, min_kernels);
  } catch (const UserError& e) {
    // The fit speaks of `sextant calibrate`'s flags; here the way on is that command.
    ThrowUserError(SourceLocation{path}, "",
                   fmt::format("{}{}", e.what(),
                               measured.from_trace
                                   ? fmt::format(" (`sextant calibrate {} --min-kernels 1 -o "
                                                 "FILE` fits on fewer, for --calibration FILE)",
                                                 path)
                                   : std::string()));
  }
  std::string errors;
  for (const ClassError& e : fit.errors) {
    errors += fmt::format("{}{} median error {:.1f}% -> {:.1f}%", errors.empty() ? "" : ", ",
                          KernelClassName(e.kind), e.median_before * 100, e.median_after * 100);
    // The fit minimises the absolute log error, not this median: on a handful of kernels the
    // two can disagree, and the projection then rests on a table worse than the default.
    if (warnings != nullptr && e.median_after > e.median_before * 1.001) {
      warnings->push_back(fmt::format(
          "--calibration {}: the fitted table predicts its {} kernels worse than the default "
          "(median error {:.1f}% -> {:.1f}%); `sextant calibrate {} --per-kernel` shows them",
          path, KernelClassName(e.kind), e.median_before * 100, e.median_after * 100, path));
    }
  }
  std::vector<std::string> kept;
  for (const FittedClass& c : fit.classes) {
    if (c.work_bound < min_kernels) kept.push_back(std::string(KernelClassName(c.kind)));
  }
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  *source = fmt::format("{} table fitted on {} measured kernels from {} ({}){}", gpu.name,
                        fit.usable_kernels, path, errors,
                        kept.empty() ? ""
                                     : fmt::format("; default kept where a size class had fewer "
                                                   "than {} kernels ({})",
                                                   min_kernels, fmt::join(kept, ", ")));
  EfficiencyTable t = fit.table;
  t.set_source(*source);
  return t;
}

}  // namespace sextant
