// `sextant validate RUNS.csv`: projected vs measured for published training runs.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "projection/validation.h"
#include "report/console_table.h"

namespace sextant::cli {

void AddValidateCommand(CLI::App& app) {
  struct Options {
    std::string csv;
    bool json = false;
    bool show_skipped = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "validate", "Project every row of a published-results table and report the error");
  cmd->add_option("RUNS.csv", o->csv, "table in the layout of corpus/validation/published_runs.csv")
      ->required();
  cmd->add_flag("--json", o->json, "machine-readable result on stdout");
  cmd->add_flag("--show-skipped", o->show_skipped, "list every row that was not projected");
  cmd->callback([o] {
    const ValidationReport report = Validate(o->csv, DefaultPredictor());
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
