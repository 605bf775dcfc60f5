#include "server/pp_view_page.h"

#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "report/console_table.h"
#include "report/html_writer.h"
#include "report/table.h"
#include "server/web_assets.h"
#include "util/units.h"

namespace sextant {

namespace {

// Times on the page to the microsecond: its tooltips show at most three decimals of a
// millisecond, and a 17-digit double is six times the bytes.
double ToMicrosecond(const nlohmann::json& ms) {
  return ms.is_number() ? std::round(ms.get<double>() * 1000) / 1000 : 0.0;
}

// A column of strings as its distinct values and an index into them per row ({"levels":
// ["send", "recv"], "codes": [0, 1, ...]}): "activation" 31,744 times is most of a DeepSeek-V3
// step's transfers otherwise.
nlohmann::json Levels(const nlohmann::json& column) {
  nlohmann::json levels = nlohmann::json::array();
  nlohmann::json codes = nlohmann::json::array();
  std::map<std::string, size_t> index;
  for (const nlohmann::json& value : column) {
    const std::string& s = value.get_ref<const std::string&>();
    auto [it, added] = index.try_emplace(s, index.size());
    if (added) levels.push_back(s);
    codes.push_back(it->second);
  }
  return {{"levels", std::move(levels)}, {"codes", std::move(codes)}};
}

// A list of objects as one list per key ({"op": ..., "start_ms": [0.0, ...]}), the keys of the
// first object: `*_ms` values to the microsecond, strings as Levels.
nlohmann::json Columns(const nlohmann::json& rows) {
  nlohmann::json columns = nlohmann::json::object();
  if (!rows.is_array() || rows.empty() || !rows[0].is_object()) return columns;
  for (const auto& [key, first] : rows[0].items()) {
    const bool time = key.ends_with("_ms");
    nlohmann::json column = nlohmann::json::array();
    bool strings = true;
    for (const nlohmann::json& row : rows) {
      const auto value = row.find(key);
      if (value == row.end()) {
        column.push_back(nullptr);
      } else {
        column.push_back(time ? nlohmann::json(ToMicrosecond(*value)) : *value);
      }
      strings = strings && column.back().is_string();
    }
    columns[key] = strings ? Levels(column) : std::move(column);
  }
  return columns;
}

// The view as the page embeds it: every rank's blocks and transfers in columns, which
// pp_view.js reads back into objects. A 16-rank DeepSeek-V3 step holds ~48,000 of them.
nlohmann::json PageData(const nlohmann::json& view) {
  nlohmann::json data = nlohmann::json::object();
  for (const auto& [key, value] : view.items()) {
    if (key != "runs") data[key] = value;
  }
  nlohmann::json& runs = data["runs"] = nlohmann::json::array();
  for (const nlohmann::json& run : view.value("runs", nlohmann::json::array())) {
    nlohmann::json r = nlohmann::json::object();
    for (const auto& [key, value] : run.items()) {
      if (key != "iterations") r[key] = value;
    }
    nlohmann::json& iterations = r["iterations"] = nlohmann::json::array();
    for (const nlohmann::json& it : run.value("iterations", nlohmann::json::array())) {
      nlohmann::json i = nlohmann::json::object();
      for (const auto& [key, value] : it.items()) {
        if (key != "ranks") i[key] = value;
      }
      nlohmann::json& ranks = i["ranks"] = nlohmann::json::array();
      for (const nlohmann::json& rank : it.value("ranks", nlohmann::json::array())) {
        nlohmann::json k = nlohmann::json::object();
        for (const auto& [key, value] : rank.items()) {
          k[key] = key == "blocks" || key == "transfers" ? Columns(value) : value;
        }
        ranks.push_back(std::move(k));
      }
      iterations.push_back(std::move(i));
    }
    runs.push_back(std::move(r));
  }
  return data;
}

}  // namespace

std::string RenderPpViewPage(const nlohmann::json& view) {
  HtmlPage page(view.value("title", std::string("Pipeline schedules")));
  page.heading = false;
  page.data = PageData(view);
  // Shared helpers first, then the view; a projection section is drawn when the view has one.
  // The schedule view, then the projection panels of simulated configs below it.
  page.script = std::string(WebAsset("axis.js")) + "\n" + std::string(WebAsset("pp_view.js")) +
                "\n" + std::string(WebAsset("projection_view.js"));
  page.style = std::string(WebAsset("pp_view.css"));
  return RenderHtmlPage(page);
}

namespace {

const nlohmann::json* RunById(const nlohmann::json& view, const nlohmann::json& id) {
  for (const auto& r : view["runs"]) {
    if (r["id"] == id) return &r;
  }
  return nullptr;
}

double Num(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : 0.0; }

}  // namespace

std::string RenderPpViewText(const nlohmann::json& view) {
  std::string out;
  for (const auto& shown : view["initial"]) {
    const nlohmann::json* run = RunById(view, shown["run"]);
    if (!run) continue;
    for (const auto& it : (*run)["iterations"]) {
      if (it["key"] != shown["iteration"]) continue;
      // The schedule, unless the run's name already says it ("config.yaml · 1f1b").
      const std::string name = (*run)["name"].get<std::string>();
      const std::string schedule =
          (*run)["schedule"].is_string() &&
                  name.find((*run)["schedule"].get<std::string>()) == std::string::npos
              ? ", " + (*run)["schedule"].get<std::string>()
              : "";
      // A simulation is one step; a dump has numbered iterations.
      const bool simulated = (*run)["source"] == "simulated" && (*run)["iterations"].size() == 1;
      const std::string which =
          simulated ? std::string("one step") : "iteration " + it["key"].get<std::string>();
      // A projected config says whether it fits, as `projection memory` does.
      std::string verdict;
      for (const auto& p : view.value("projections", nlohmann::json::array())) {
        if (p["run"] != (*run)["id"] || !p.contains("memory")) continue;
        const nlohmann::json& m = p["memory"];
        verdict = fmt::format("\n  projected peak {:.2f} GiB of {:.2f} GiB HBM: {}",
                              ToGiB(m.value("peak_bytes", int64_t{0})),
                              ToGiB(m.value("capacity_bytes", int64_t{0})),
                              m.value("verdict", std::string("?")));
        // The pipeline step is forward and backward only; the iteration `projection
        // performance` reports adds the optimizer step and exposed data-parallel traffic.
        if (p.contains("performance") && p["performance"].contains("iteration_time_ms")) {
          verdict += fmt::format(
              "; the iteration with the optimizer step and exposed DP communication: {:.2f} ms "
              "(`projection performance`)",
              Num(p["performance"]["iteration_time_ms"]));
        }
      }
      // What the memory column holds, as the page's headline says it: a measured dump's
      // max_memory_reserved is "max memory"; a simulated dump records only its peak
      // activations, a projected config its memory per GPU.
      const std::string memory_label = run->value("memory_label", std::string());
      const std::string memory_word = memory_label.empty() || memory_label == "max memory reserved"
                                          ? "max memory"
                                          : memory_label;
      Table t("pp_ranks",
              fmt::format("{} ({}{}): {}: {:.2f} ms, {} {:.2f} GiB, stage "
                          "imbalance {:.3f}{}",
                          name, (*run)["source"].get<std::string>(), schedule, which,
                          Num(it["iteration_time_ms"]), memory_word, Num(it["max_memory_gib"]),
                          Num(it["stage_imbalance"]), verdict),
              {{"rank", "rank", 0},
               {"forward_ms", "F (ms)", 2},
               {"backward_ms", "B (ms)", 2},
               {"wgrad_ms", "W (ms)", 2},
               {"total_ms", "rank time (ms)", 2},
               {"bubble_pct", "bubble (%)", 2},
               {"memory_gib", (*run)["memory_label"].get<std::string>() + " (GiB)", 2}});
      for (const auto& r : it["ranks"]) {
        t.AddRow({fmt::format("PP-{}", r["rank"].get<int>()), Num(r["forward_ms"]),
                  Num(r["backward_ms"]), Num(r["wgrad_ms"]), Num(r["total_ms"]),
                  Num(r["bubble_ratio"]) * 100, Num(r["memory_gib"])});
      }
      out += RenderConsoleTable(t) + "\n";
    }
  }
  for (const auto& c : view["comparisons"]) {
    const nlohmann::json* m = RunById(view, c["measured"]);
    const nlohmann::json* o = RunById(view, c["other"]);
    if (!m || !o) continue;
    const double mt = Num(c["measured_iteration_time_ms"]), ot = Num(c["other_iteration_time_ms"]);
    Table t("pp_comparison",
            fmt::format("{} iteration {} vs {}: {:.2f} ms vs {:.2f} ms ({:+.1f}%)",
                        (*m)["name"].get<std::string>(), c["measured_iteration"].get<std::string>(),
                        (*o)["name"].get<std::string>(), mt, ot, mt > 0 ? (ot - mt) / mt * 100 : 0),
            {{"rank", "rank", 0},
             {"measured_ms", "measured (ms)", 2},
             {"other_ms", (*o)["source"].get<std::string>() + " (ms)", 2},
             {"diff_pct", (*o)["source"].get<std::string>() + " vs measured (%)", 1},
             {"measured_bubble", "measured bubble (%)", 2},
             {"other_bubble", (*o)["source"].get<std::string>() + " bubble (%)", 2}});
    for (const auto& r : c["ranks"]) {
      t.AddRow({fmt::format("PP-{}", r["rank"].get<int>()), Num(r["measured_total_ms"]),
                Num(r["other_total_ms"]), Num(r["total_diff_pct"]),
                Num(r["measured_bubble_ratio"]) * 100, Num(r["other_bubble_ratio"]) * 100});
    }
    out += RenderConsoleTable(t) + "\n";
  }
  for (const auto& n : view["notes"]) out += "note: " + n.get<std::string>() + "\n";
  return out;
}

}  // namespace sextant
