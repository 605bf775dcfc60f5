#include "pipeline/pp_dump_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file_io.h"
#include "util/json_input.h"

namespace sextant {
namespace {

using nlohmann::json;

// The dump nests three levels deep; anything much deeper is hostile input, refused before
// the parser builds (and later recursively frees) a deep tree.
constexpr int kMaxNesting = 8;
// Ranks and iterations are bounded so a hostile config cannot make us open millions of files.
constexpr int64_t kMaxPipelineRanks = 4096;

json ParseJson(std::string_view text, const std::string& file) {
  return ParseUntrustedJson(text, file, kMaxNesting, "a pipeline dump");
}

const char* TypeName(const json& value) { return value.type_name(); }

int64_t ReadInt(const json& value, const std::string& file, const std::string& key) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      return static_cast<int64_t>(d);
    }
  }
  ThrowUserError({file}, key, fmt::format("expected an integer, found {}", TypeName(value)));
}

double ReadNumber(const json& value, const std::string& file, const std::string& key) {
  if (!value.is_number()) {
    ThrowUserError({file}, key, fmt::format("expected a number, found {}", TypeName(value)));
  }
  const double d = value.get<double>();
  if (!std::isfinite(d)) ThrowUserError({file}, key, "number is not finite");
  return d;
}

template <typename T>
std::vector<T> ReadList(const json& record, const char* name, const std::string& file,
                        const std::string& iteration) {
  std::vector<T> out;
  auto it = record.find(name);
  if (it == record.end()) return out;
  const std::string key = iteration + "." + name;
  if (!it->is_array()) {
    ThrowUserError({file}, key, fmt::format("expected a list, found {}", TypeName(*it)));
  }
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string element = fmt::format("{}[{}]", key, i);
    if constexpr (std::is_same_v<T, double>) {
      out.push_back(ReadNumber((*it)[i], file, element));
    } else {
      out.push_back(ReadInt((*it)[i], file, element));
    }
  }
  return out;
}

void RequireSameLength(size_t a, size_t b, const char* first, const char* second,
                       const std::string& file, const std::string& iteration) {
  if (a == b) return;
  ThrowUserError({file}, iteration,
                 fmt::format("'{}' has {} entries but '{}' has {}", first, a, second, b));
}

// Numeric order for keys "1".."20" (file order is arbitrary in JSON); non-numeric keys after.
bool IsSmallNumber(const std::string& key) {
  return !key.empty() && key.size() < 10 &&
         std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IterationKeyLess(const std::string& a, const std::string& b) {
  const bool a_num = IsSmallNumber(a);
  const bool b_num = IsSmallNumber(b);
  if (a_num && b_num) return std::stol(a) < std::stol(b);
  if (a_num != b_num) return a_num;
  return a < b;
}

// A pipeline dump file is a few MB at most; 1 GiB is far beyond any real one.
std::string ReadWholeFile(const std::string& path) { return ReadFile(path, int64_t{1} << 30); }

// Times are ms since the rank's iteration start: each op must start at or after 0 and end at or
// after its start, or the schedule statistics (bubble ratio, idle) turn meaningless.
void RequireIntervals(const std::vector<double>& start, const std::vector<double>& end,
                      const char* name, const std::string& file, const std::string& key) {
  for (size_t i = 0; i < start.size(); ++i) {
    if (start[i] < 0) {
      ThrowUserError({file}, fmt::format("{}.{}_start[{}]", key, name, i),
                     fmt::format("negative time {} ms", start[i]));
    }
    if (end[i] < start[i]) {
      ThrowUserError({file}, fmt::format("{}.{}_end[{}]", key, name, i),
                     fmt::format("ends at {} ms, before its start at {} ms", end[i], start[i]));
    }
  }
}

}  // namespace

PrimusDumpConfig ParsePrimusDumpConfig(std::string_view text, const std::string& file) {
  const json root = ParseJson(text, file);
  if (!root.is_object()) {
    ThrowUserError({file}, "", fmt::format("expected a JSON object, found {}", TypeName(root)));
  }
  PrimusDumpConfig config;
  auto read = [&](const char* name, const char* fallback, int64_t* out) {
    auto it = root.find(name);
    if (it == root.end() && fallback != nullptr) {
      it = root.find(fallback);
      name = fallback;
    }
    if (it != root.end()) *out = ReadInt(*it, file, name);
  };
  read("world_size", nullptr, &config.world_size);
  read("dp_size", nullptr, &config.dp_size);
  read("tp_size", nullptr, &config.tp_size);
  read("ep_size", nullptr, &config.ep_size);
  read("pp_size", nullptr, &config.pp_size);
  read("vp_size", "vpp_size", &config.vp_size);  // simulator spelling as fallback
  read("num_mbs", "micro_batches", &config.num_mbs);
  read("train_iters", nullptr, &config.train_iters);
  if (auto it = root.find("generator"); it != root.end()) {
    if (!it->is_string()) {
      ThrowUserError({file}, "generator",
                     fmt::format("expected a string, found {}", TypeName(*it)));
    }
    config.generator = it->get<std::string>().substr(0, 80);
  } else if (root.contains("vpp_size") || root.contains("micro_batches")) {
    config.generator = "primus simulator";
  }
  if (config.pp_size < 1 || config.pp_size > kMaxPipelineRanks) {
    ThrowUserError({file}, "pp_size",
                   fmt::format("must be present and between 1 and {}, got {}", kMaxPipelineRanks,
                               config.pp_size));
  }
  if (root.contains("num_mbs") && config.num_mbs < 1) {
    ThrowUserError({file}, "num_mbs", fmt::format("must be >= 1, got {}", config.num_mbs));
  }
  if (config.vp_size < 1) {
    ThrowUserError({file}, "vp_size", fmt::format("must be >= 1, got {}", config.vp_size));
  }
  return config;
}

// A week: longer than any training iteration, far short of what breaks the arithmetic.
constexpr double kMaxIterationMs = 7 * 86'400'000.0;

PrimusDumpRank ParsePrimusDumpRank(std::string_view text, const std::string& file, int pp_rank) {
  const json root = ParseJson(text, file);
  if (!root.is_object()) {
    ThrowUserError({file}, "",
                   fmt::format("expected an object of iterations, found {}", TypeName(root)));
  }
  PrimusDumpRank rank;
  rank.pp_rank = pp_rank;
  rank.iterations.reserve(root.size());
  for (const auto& [key, record] : root.items()) {
    if (!record.is_object()) {
      ThrowUserError({file}, key,
                     fmt::format("expected an iteration record, found {}", TypeName(record)));
    }
    PrimusDumpIteration it;
    it.key = key;
    auto total = record.find("total");
    if (total == record.end()) ThrowUserError({file}, key + ".total", "missing");
    it.total_ms = ReadNumber(*total, file, key + ".total");
    auto memory = record.find("memory");
    if (memory != record.end()) it.memory_gib = ReadNumber(*memory, file, key + ".memory");
    it.fwd_start = ReadList<double>(record, "fwd_start", file, key);
    it.fwd_end = ReadList<double>(record, "fwd_end", file, key);
    it.bwd_start = ReadList<double>(record, "bwd_start", file, key);
    it.bwd_end = ReadList<double>(record, "bwd_end", file, key);
    it.wgrad_start = ReadList<double>(record, "wgrad_start", file, key);
    it.wgrad_end = ReadList<double>(record, "wgrad_end", file, key);
    it.fwd_minibatch = ReadList<int64_t>(record, "fwd_minibatch", file, key);
    it.fwd_chunk = ReadList<int64_t>(record, "fwd_chunk", file, key);
    it.bwd_minibatch = ReadList<int64_t>(record, "bwd_minibatch", file, key);
    it.bwd_chunk = ReadList<int64_t>(record, "bwd_chunk", file, key);
    it.wgrad_minibatch = ReadList<int64_t>(record, "wgrad_minibatch", file, key);
    it.wgrad_chunk = ReadList<int64_t>(record, "wgrad_chunk", file, key);
    RequireSameLength(it.fwd_start.size(), it.fwd_end.size(), "fwd_start", "fwd_end", file, key);
    RequireSameLength(it.bwd_start.size(), it.bwd_end.size(), "bwd_start", "bwd_end", file, key);
    RequireSameLength(it.wgrad_start.size(), it.wgrad_end.size(), "wgrad_start", "wgrad_end", file,
                      key);
    if (it.total_ms < 0) {
      ThrowUserError({file}, key + ".total", fmt::format("negative time {} ms", it.total_ms));
    }
    RequireIntervals(it.fwd_start, it.fwd_end, "fwd", file, key);
    RequireIntervals(it.bwd_start, it.bwd_end, "bwd", file, key);
    RequireIntervals(it.wgrad_start, it.wgrad_end, "wgrad", file, key);
    // `total` is the iteration's time from the same clock as the ops: the last op ends within
    // it (Primus's dumps end their last op at 99.5-99.99% of it). Anything else would give
    // negative bubbles or a step of ages.
    double last_end = 0;
    for (const std::vector<double>* ends : {&it.fwd_end, &it.bwd_end, &it.wgrad_end}) {
      for (double end : *ends) last_end = std::max(last_end, end);
    }
    if (it.total_ms < last_end * (1 - 1e-3)) {
      ThrowUserError(
          {file}, key + ".total",
          fmt::format("{} ms ends before the iteration's last op ({} ms)", it.total_ms, last_end));
    }
    if (it.total_ms > kMaxIterationMs) {
      ThrowUserError({file}, key + ".total",
                     fmt::format("{} ms is not an iteration time (more than {} days)", it.total_ms,
                                 kMaxIterationMs / 86'400'000));
    }
    rank.iterations.push_back(std::move(it));
  }
  std::sort(rank.iterations.begin(), rank.iterations.end(),
            [](const PrimusDumpIteration& a, const PrimusDumpIteration& b) {
              return IterationKeyLess(a.key, b.key);
            });
  return rank;
}

bool IsPipelineDump(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "config.json", ec) &&
         std::filesystem::is_regular_file(dir / "pp_rank_0.json", ec);
}

std::string PipelineDumpOfFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (!std::filesystem::is_regular_file(p, ec)) return "";
  const std::string name = p.filename().string();
  bool dump_file = name == "config.json";
  constexpr std::string_view kPrefix = "pp_rank_";
  if (name.size() > kPrefix.size() + 5 && name.starts_with(kPrefix) && name.ends_with(".json")) {
    const std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 5);
    dump_file = std::all_of(digits.begin(), digits.end(),
                            [](unsigned char c) { return std::isdigit(c) != 0; });
  }
  if (!dump_file) return "";
  std::filesystem::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  return IsPipelineDump(dir) ? dir.string() : "";
}

PrimusDump ReadPrimusDump(const std::string& dir) {
  PrimusDump dump;
  const std::string config_path = dir + "/config.json";
  std::error_code ec;
  if (!std::filesystem::exists(config_path, ec) && std::filesystem::is_directory(dir, ec)) {
    // A folder of dumps (one per run) rather than a dump: name the ones inside.
    std::vector<std::string> dumps;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_directory(ec) && std::filesystem::exists(entry.path() / "config.json", ec))
        dumps.push_back(entry.path().filename().string());
    }
    std::sort(dumps.begin(), dumps.end());
    if (!dumps.empty()) {
      std::string list;
      for (const std::string& d : dumps) list += (list.empty() ? "" : ", ") + d;
      ThrowUserError(SourceLocation{dir}, "",
                     fmt::format("not a pipeline dump (no config.json) but a folder of {}: {}; "
                                 "give those",
                                 dumps.size() == 1 ? "one dump" : "dumps", list));
    }
    // An empty folder, or dumps further down: say what a dump is rather than "cannot open".
    ThrowUserError(SourceLocation{dir}, "",
                   "not a pipeline dump: no config.json (Primus's --dump_pp_data writes "
                   "config.json and pp_rank_N.json into one folder per run; `sextant serve` "
                   "finds the dumps in a folder tree)");
  }
  dump.config = ParsePrimusDumpConfig(ReadWholeFile(config_path), config_path);
  for (int r = 0; r < dump.config.pp_size; ++r) {
    const std::string path = fmt::format("{}/pp_rank_{}.json", dir, r);
    dump.ranks.push_back(ParsePrimusDumpRank(ReadWholeFile(path), path, r));
  }
  return dump;
}

}  // namespace sextant
