// `sextant validate RUNS.csv`: projected vs measured for published training runs.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "projection/calibration_fit.h"
#include "projection/validation.h"
#include "report/console_table.h"
#include "report/json_table.h"
#include "util/error.h"

namespace sextant::cli {

void AddValidateCommand(CLI::App& app) {
  struct Options {
    std::string csv;
    bool json = false;
    bool show_skipped = false;
    bool fit = false;
    bool cross_validate = false;
    std::string explain;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "validate", "Project every row of a published-results table and report the error");
  cmd->add_option("RUNS.csv", o->csv, "table in the layout of corpus/validation/published_runs.csv")
      ->required();
  cmd->add_flag("--json", o->json, "machine-readable result on stdout");
  cmd->add_flag("--show-skipped", o->show_skipped, "list every row that was not projected");
  cmd->add_flag("--fit-efficiency", o->fit,
                "fit the calibration constants (in-training efficiency, cuDNN attention scale) and "
                "print the curves");
  cmd->add_flag("--cross-validate", o->cross_validate,
                "score each source with constants re-fitted without it (leave-one-source-out)")
      ->excludes("--fit-efficiency");
  cmd->add_option("--explain", o->explain,
                  "print the full projection (job, breakdown, layer times) of the row with this id")
      ->excludes("--cross-validate")
      ->excludes("--fit-efficiency");
  cmd->callback([o, cmd] {
    if (cmd->count("--explain") > 0 && o->explain.empty()) {
      ThrowUserError("--explain: give the id of a row");
    }
    if (!o->explain.empty()) {
      std::cout << ExplainPublishedRow(o->csv, o->explain, o->json);
      return;
    }
    if (o->cross_validate) {
      const CrossValidation cv = CrossValidate(o->csv);
      if (cv.sources.empty()) {
        ThrowUserError(o->csv +
                       ": no time or throughput row could be projected: nothing to cross-validate "
                       "(validate without --cross-validate lists why)");
      }
      if (o->json) {
        std::cout << CrossValidationJson(cv).dump(2) << "\n";
      } else {
        std::cout << RenderConsoleTable(CrossValidationTable(cv));
        if (cv.held_out_sources == 0) {
          std::cout << fmt::format(
              "\nno held-out accuracy: no source can be scored with constants fitted on "
              "others (one source, or no dense time rows elsewhere); with the shipped "
              "constants: {:.1f}%\n",
              cv.shipped_mape_pct);
        } else {
          std::cout << fmt::format(
              "\nheld-out accuracy (mean over {} of {} source{}): {:.1f}% MAPE; with the "
              "shipped constants, fitted on every source: {:.1f}%\n",
              cv.held_out_sources, cv.sources.size(), cv.sources.size() == 1 ? "" : "s",
              cv.held_out_mape_pct, cv.shipped_mape_pct);
        }
      }
      return;
    }
    if (o->fit) {
      const CalibrationFit fit = FitCalibration(o->csv);
      Table a(
          "attention_fit",
          fmt::format("cuDNN attention scale: mean-of-sources MAPE of the {} dense rows that run "
                      "Transformer Engine attention on Hopper",
                      fit.attention_rows),
          {{"scale", "scale", 2}, {"mape_pct", "MAPE %", 2}});
      for (const auto& [v, mape] : fit.attention_curve) a.AddRow({v, mape});
      Table e("efficiency_fit",
              fmt::format("In-training efficiency: mean-of-sources MAPE of the {} time rows",
                          fit.efficiency_rows),
              {{"efficiency", "efficiency", 2}, {"mape_pct", "MAPE %", 2}});
      for (const auto& [v, mape] : fit.efficiency_curve) e.AddRow({v, mape});
      if (o->json) {
        const nlohmann::json j{{"attention_curve", TableRowsToJson(a)},
                               {"efficiency_curve", TableRowsToJson(e)},
                               {"attention_rows", fit.attention_rows},
                               {"efficiency_rows", fit.efficiency_rows},
                               {"best_in_training_efficiency", fit.best.in_training_efficiency},
                               {"best_cudnn_attention_scale", fit.best.cudnn_attention_scale},
                               {"best_mape_pct", fit.best_mape_pct}};
        std::cout << j.dump(2) << "\n";
        return;
      }
      std::cout << RenderConsoleTable(a) << "\n"
                << RenderConsoleTable(e)
                << fmt::format(
                       "\nbest: in-training efficiency {:.2f}, cuDNN attention scale {:.2f} "
                       "(MAPE {:.2f}%)\n",
                       fit.best.in_training_efficiency, fit.best.cudnn_attention_scale,
                       fit.best_mape_pct);
      return;
    }
    const ValidationReport report = Validate(o->csv, DefaultPredictor());
    if (report.rows.empty()) {
      // A score over no rows is not 0% error: say why nothing was projected.
      if (!report.skipped.empty() && !o->json) {
        std::cerr << RenderConsoleTable(ValidationSkippedTable(report), 110);
      }
      if (report.skipped.empty()) ThrowUserError(o->csv + ": the table has no rows");
      ThrowUserError(fmt::format(
          "{}: no row could be projected: {} skipped for the reason "
          "listed{}",
          o->csv,
          report.skipped.size() == 1 ? std::string("its one row,")
                                     : fmt::format("{} rows, each", report.skipped.size()),
          o->json ? " by validate without --json" : " above"));
    }
    if (o->json) {
      std::cout << ValidationJson(report).dump(2) << "\n";
      return;
    }
    std::cout << RenderConsoleTable(ValidationRowsTable(report)) << "\n";
    std::cout << RenderConsoleTable(ValidationSourcesTable(report)) << "\n";
    if (o->show_skipped) {
      std::cout << RenderConsoleTable(ValidationSkippedTable(report), 110);
    } else {
      std::cout << report.skipped.size()
                << " rows not projected (--show-skipped lists them with the reason)\n";
    }
  });
}

}  // namespace sextant::cli
