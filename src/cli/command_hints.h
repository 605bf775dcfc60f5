// "Did you mean" for the command line itself: a mistyped command ("projection memry") or
// flag ("--target-node"), with the same policy as every other name (util/close_matches.h).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sextant::cli {

// The long flags of a command, as typed: "--target-nodes", "--config", ...
std::vector<std::string> FlagNames(const CLI::App& command);

// For a command line CLI11 refused: "unknown command 'memry' for 'sextant projection'; did
// you mean memory?" or "unknown option '--topp'; did you mean --top?"; "" when nothing close
// is found (CLI11's own message then stands).
std::string CommandLineHint(const CLI::App& app, int argc, const char* const* argv);

// CLI11's message for a refused command line, reworded where it is cryptic: a flag given
// twice ("--target-nodes: At Most 1 required but received 2") says so, naming the option's
// other spellings (--config / --exp) that `app`'s selected commands accept.
std::string ReadableParseError(const CLI::App& app, const CLI::ParseError& error);

// `sextant help [COMMAND...]`, as git and go spell it, read as `sextant [COMMAND...] --help`;
// any other command line is returned as it is.
std::vector<const char*> HelpCommandAsFlag(int argc, const char* const* argv);

// For `sextant help [COMMAND...]`: "unknown command 'memry' for 'sextant projection'; did you
// mean memory?" when a word names no command (CLI11 would show the help of the command before
// it, as if the word were not there); "" otherwise, and for any other command line.
std::string HelpCommandHint(const CLI::App& app, int argc, const char* const* argv);

// Every option of `app` and its commands that names a file or folder to write (-o/--output,
// --html, --xlsx, --csv, --csv-dir, --export_config) refuses an empty value: `-o ''` would
// otherwise write nothing and report success.
void RefuseEmptyOutputPaths(CLI::App& app);

}  // namespace sextant::cli
