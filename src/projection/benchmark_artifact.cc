#include "projection/benchmark_artifact.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/json_input.h"

namespace sextant {
namespace {

constexpr std::string_view kArtifactFormat = "sextant-benchmark";
// Bounds no real measurement comes near; they keep a hostile file from building huge vectors
// or passing absurd times to the projection.
constexpr size_t kArtifactMaxPieces = 256;
constexpr size_t kArtifactMaxSources = 4096;
constexpr size_t kArtifactMaxText = 4096;
constexpr double kArtifactMaxMs = 1e9;  // about 11.6 days
constexpr int64_t kArtifactMaxCount = int64_t{1} << 40;
constexpr int64_t kArtifactMaxWorld = 10'000'000;
// Times are written in ms and held in s: bounds and sums allow the rounding of the two
// conversions, so that what this program writes it reads back.
constexpr double kSlack = 1e-9;

[[noreturn]] void ArtifactError(const std::string& file, const std::string& key,
                                const std::string& why) {
  ThrowUserError(SourceLocation{file}, key, why);
}

// Milliseconds in the file, seconds in memory.
double ArtifactMs(const nlohmann::json& j, const char* name, const std::string& file,
                  const std::string& where) {
  const nlohmann::json& v = RequiredJsonMember(j, name, file, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      v.get<double>() > kArtifactMaxMs * (1 + kSlack)) {
    ArtifactError(file, where + name,
                  fmt::format("must be a time in ms in [0, {:g}]", kArtifactMaxMs));
  }
  return v.get<double>() * 1e-3;
}

int64_t ArtifactCount(const nlohmann::json& j, const char* name, const std::string& file,
                      const std::string& where, int64_t least) {
  const nlohmann::json& v = RequiredJsonMember(j, name, file, where);
  if (!v.is_number_integer() || v.get<int64_t>() < least || v.get<int64_t>() > kArtifactMaxCount) {
    ArtifactError(file, where + name, fmt::format("must be a whole number from {}", least));
  }
  return v.get<int64_t>();
}

std::string ArtifactText(const nlohmann::json& j, const char* name, const std::string& file,
                         const std::string& where) {
  const nlohmann::json& v = RequiredJsonMember(j, name, file, where);
  if (!v.is_string() || v.get<std::string>().size() > kArtifactMaxText) {
    ArtifactError(file, where + name,
                  fmt::format("must be a string of at most {} bytes", kArtifactMaxText));
  }
  return v.get<std::string>();
}

bool ArtifactFlag(const nlohmann::json& j, const char* name, const std::string& file,
                  const std::string& where) {
  const nlohmann::json& v = RequiredJsonMember(j, name, file, where);
  if (!v.is_boolean()) ArtifactError(file, where + name, "must be true or false");
  return v.get<bool>();
}

nlohmann::ordered_json ArtifactLayersJson(const MeasuredLayerTimes& m) {
  nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
  for (const MeasuredPiece& p : m.pieces) {
    pieces.push_back({{"name", p.name},
                      {"forward_ms", p.forward_s * 1e3},
                      {"backward_input_ms", p.backward_input_s * 1e3},
                      {"backward_weight_ms", p.backward_weight_s * 1e3},
                      {"instances", p.instances},
                      {"communication", p.communication}});
  }
  return {{"moe", m.moe},
          {"layers", m.layers},
          {"forward_ms", m.forward_s * 1e3},
          {"backward_input_ms", m.backward_input_s * 1e3},
          {"backward_weight_ms", m.backward_weight_s * 1e3},
          {"ep_comm_ms", m.ep_comm_s * 1e3},
          {"ep_comm_forward_ms", m.ep_comm_forward_s * 1e3},
          {"exposed_ep_comm_ms", m.exposed_ep_comm_s * 1e3},
          {"overlap_note", m.overlap_note},
          {"pieces", pieces}};
}

nlohmann::ordered_json ArtifactStepJson(const MeasuredStep& m) {
  return {{"ranks", m.ranks},
          {"world_size", m.world_size},
          {"iterations", m.iterations},
          {"micro_batches", m.micro_batches},
          {"step_ms", m.step_s * 1e3},
          {"forward_ms", m.forward_s * 1e3},
          {"backward_ms", m.backward_s * 1e3},
          {"optimizer_ms", m.optimizer_s * 1e3},
          {"communication_ms", m.communication_s * 1e3},
          {"exposed_communication_ms", m.exposed_communication_s * 1e3},
          {"other_ms", m.other_s * 1e3}};
}

MeasuredLayerTimes ReadArtifactLayers(const nlohmann::json& j, const std::string& file) {
  const std::string w = "layers.";
  if (!j.is_object()) ArtifactError(file, "layers", "must be an object");
  RefuseUnknownJsonKeys(
      j,
      {"moe", "layers", "forward_ms", "backward_input_ms", "backward_weight_ms", "ep_comm_ms",
       "ep_comm_forward_ms", "exposed_ep_comm_ms", "overlap_note", "pieces"},
      file, w);
  MeasuredLayerTimes m;
  m.moe = ArtifactFlag(j, "moe", file, w);
  m.layers = ArtifactCount(j, "layers", file, w, 1);
  m.forward_s = ArtifactMs(j, "forward_ms", file, w);
  m.backward_input_s = ArtifactMs(j, "backward_input_ms", file, w);
  m.backward_weight_s = ArtifactMs(j, "backward_weight_ms", file, w);
  m.ep_comm_s = ArtifactMs(j, "ep_comm_ms", file, w);
  m.ep_comm_forward_s = ArtifactMs(j, "ep_comm_forward_ms", file, w);
  m.exposed_ep_comm_s = ArtifactMs(j, "exposed_ep_comm_ms", file, w);
  m.overlap_note = ArtifactText(j, "overlap_note", file, w);
  // The exchange is part of the passes it was measured in, and what was exposed part of it.
  if (m.ep_comm_forward_s > m.ep_comm_s * (1 + kSlack) ||
      m.exposed_ep_comm_s > m.ep_comm_s * (1 + kSlack) ||
      m.ep_comm_s > (m.forward_s + m.backward_input_s) * (1 + kSlack)) {
    ArtifactError(
        file, w + "ep_comm_ms",
        "must hold its forward and exposed parts and lie within the forward and backward");
  }
  const nlohmann::json& pieces = RequiredJsonMember(j, "pieces", file, w);
  if (!pieces.is_array() || pieces.empty() || pieces.size() > kArtifactMaxPieces) {
    ArtifactError(file, w + "pieces",
                  fmt::format("must be a list of 1 to {} pieces", kArtifactMaxPieces));
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string at = fmt::format("{}pieces[{}].", w, i);
    const nlohmann::json& p = pieces[i];
    if (!p.is_object()) ArtifactError(file, at, "must be an object");
    RefuseUnknownJsonKeys(p,
                          {"name", "forward_ms", "backward_input_ms", "backward_weight_ms",
                           "instances", "communication"},
                          file, at);
    MeasuredPiece piece;
    piece.name = ArtifactText(p, "name", file, at);
    piece.forward_s = ArtifactMs(p, "forward_ms", file, at);
    piece.backward_input_s = ArtifactMs(p, "backward_input_ms", file, at);
    piece.backward_weight_s = ArtifactMs(p, "backward_weight_ms", file, at);
    piece.instances = ArtifactCount(p, "instances", file, at, 0);
    piece.communication = ArtifactFlag(p, "communication", file, at);
    m.pieces.push_back(std::move(piece));
  }
  // The totals are the pieces' sums (MeasureLayerTimes): a file where they disagree was edited.
  double forward = 0, backward_input = 0, backward_weight = 0, exchange = 0, exchange_forward = 0;
  for (const MeasuredPiece& p : m.pieces) {
    forward += p.forward_s;
    backward_input += p.backward_input_s;
    backward_weight += p.backward_weight_s;
    if (p.communication) {
      exchange += p.forward_s + p.backward_input_s;
      exchange_forward += p.forward_s;
    }
  }
  for (const auto& [key, total, sum] :
       {std::tuple{"forward_ms", m.forward_s, forward},
        {"backward_input_ms", m.backward_input_s, backward_input},
        {"backward_weight_ms", m.backward_weight_s, backward_weight},
        {"ep_comm_ms", m.ep_comm_s, exchange},
        {"ep_comm_forward_ms", m.ep_comm_forward_s, exchange_forward}}) {
    if (std::abs(total - sum) > 1e-6 * std::max(total, sum) + 1e-12) {
      ArtifactError(
          file, w + key,
          fmt::format("{:g} ms is not the sum of the pieces' ({:g} ms)", total * 1e3, sum * 1e3));
    }
  }
  if (m.forward_s + m.backward_input_s + m.backward_weight_s - m.ep_comm_s <= 0) {
    ArtifactError(file, w + "forward_ms", "a measured layer computes something: all times are 0");
  }
  return m;
}

MeasuredStep ReadArtifactStep(const nlohmann::json& j, const std::string& file) {
  const std::string w = "step.";
  if (!j.is_object()) ArtifactError(file, "step", "must be an object");
  RefuseUnknownJsonKeys(
      j,
      {"ranks", "world_size", "iterations", "micro_batches", "step_ms", "forward_ms", "backward_ms",
       "optimizer_ms", "communication_ms", "exposed_communication_ms", "other_ms"},
      file, w);
  MeasuredStep m;
  m.ranks = ArtifactCount(j, "ranks", file, w, 1);
  m.world_size = ArtifactCount(j, "world_size", file, w, 1);
  // Ranks of one run: no more traces than GPUs, no more GPUs than any cluster has.
  if (m.world_size > kArtifactMaxWorld) {
    ArtifactError(file, w + "world_size", fmt::format("must be at most {}", kArtifactMaxWorld));
  }
  if (m.ranks > m.world_size) {
    ArtifactError(file, w + "ranks",
                  fmt::format("{} traces of a {}-GPU run", m.ranks, m.world_size));
  }
  m.iterations = ArtifactCount(j, "iterations", file, w, 0);
  m.micro_batches = ArtifactCount(j, "micro_batches", file, w, 1);
  m.step_s = ArtifactMs(j, "step_ms", file, w);
  m.forward_s = ArtifactMs(j, "forward_ms", file, w);
  m.backward_s = ArtifactMs(j, "backward_ms", file, w);
  m.optimizer_s = ArtifactMs(j, "optimizer_ms", file, w);
  m.communication_s = ArtifactMs(j, "communication_ms", file, w);
  m.exposed_communication_s = ArtifactMs(j, "exposed_communication_ms", file, w);
  m.other_s = ArtifactMs(j, "other_ms", file, w);
  if (m.step_s <= 0) ArtifactError(file, w + "step_ms", "must be above 0: a measured step");
  if (m.forward_s <= 0 || m.backward_s <= 0) {
    ArtifactError(file, w + (m.forward_s <= 0 ? "forward_ms" : "backward_ms"),
                  "must be above 0: a measured step has a forward and a backward");
  }
  if (m.exposed_communication_s > m.communication_s * (1 + kSlack)) {
    ArtifactError(file, w + "exposed_communication_ms", "must not exceed communication_ms");
  }
  return m;
}

}  // namespace

std::string BenchmarkArtifactJson(const BenchmarkArtifact& a) {
  nlohmann::ordered_json j;
  j["format"] = kArtifactFormat;
  j["version"] = kBenchmarkArtifactVersion;
  j["device_name"] = a.device_name;
  j["sources"] = a.sources;
  if (a.layers) j["layers"] = ArtifactLayersJson(*a.layers);
  if (a.step) j["step"] = ArtifactStepJson(*a.step);
  return j.dump(2) + "\n";
}

BenchmarkArtifact ParseBenchmarkArtifact(std::string_view text, const std::string& file) {
  // {"layers": {"pieces": [{...}]}} nests three levels.
  const nlohmann::json j = ParseUntrustedJson(text, file, 8, "a layer-time artifact");
  if (!j.is_object() || !j.contains("format") || j["format"] != kArtifactFormat) {
    ArtifactError(
        file, "format",
        fmt::format("is not \"{}\": not a layer-time artifact (what --save-benchmark writes)",
                    kArtifactFormat));
  }
  // The version first: another version's keys are not this one's to judge.
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<int64_t>() != kBenchmarkArtifactVersion) {
    ArtifactError(
        file, "version",
        fmt::format("this program reads version {} artifacts", kBenchmarkArtifactVersion));
  }
  RefuseUnknownJsonKeys(j, {"format", "version", "device_name", "sources", "layers", "step"}, file,
                        "");
  BenchmarkArtifact a;
  a.device_name = ArtifactText(j, "device_name", file, "");
  const nlohmann::json& sources = RequiredJsonMember(j, "sources", file, "");
  if (!sources.is_array() || sources.size() > kArtifactMaxSources) {
    ArtifactError(file, "sources",
                  fmt::format("must be a list of at most {} file names", kArtifactMaxSources));
  }
  for (const nlohmann::json& s : sources) {
    if (!s.is_string() || s.get<std::string>().size() > kArtifactMaxText) {
      ArtifactError(file, "sources", "must hold file names");
    }
    a.sources.push_back(s.get<std::string>());
  }
  if (j.contains("layers") == j.contains("step")) {
    ArtifactError(file, "layers",
                  "one of \"layers\" (per-layer times) and \"step\" (per-step phases)");
  }
  // What the measurements are later checked against names this file and what it came from.
  const std::string origin =
      a.sources.empty()      ? file
      : a.sources.size() > 2 ? fmt::format("{} (saved from {} and {} more)", file,
                                           a.sources.front(), a.sources.size() - 1)
                             : fmt::format("{} (saved from {})", file, fmt::join(a.sources, ", "));
  if (j.contains("layers")) {
    MeasuredLayerTimes m = ReadArtifactLayers(j["layers"], file);
    m.files = {origin};
    m.device_name = a.device_name;
    m.device_file = file;
    m.device_key = "device_name";
    a.layers = std::make_shared<const MeasuredLayerTimes>(std::move(m));
  } else {
    MeasuredStep m = ReadArtifactStep(j["step"], file);
    m.files = {origin};
    m.device_name = a.device_name;
    a.step = std::make_shared<const MeasuredStep>(std::move(m));
  }
  return a;
}

}  // namespace sextant
