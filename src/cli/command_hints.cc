#include "cli/command_hints.h"

#include <algorithm>
#include <regex>
#include <string_view>

#include <fmt/format.h>

#include "util/close_matches.h"

namespace sextant::cli {

std::vector<std::string> FlagNames(const CLI::App& command) {
  std::vector<std::string> out;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) out.push_back("--" + name);
  }
  return out;
}

std::string CommandLineHint(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* command = &app;
  std::string path = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string_view token = argv[i];
    if (token.starts_with("--")) {
      // A flag the command does not have (commands that pass unknown flags on as
      // configuration keys report those themselves).
      if (command->get_allow_extras()) return "";
      std::string_view flag = token.substr(0, token.find('='));
      std::vector<std::string> flags = FlagNames(*command);
      for (const std::string& f : flags) {
        if (f == flag) flag = {};
      }
      if (flag.empty()) {
        // Its value, when it takes one and it was not written with '='.
        const CLI::Option* option = command->get_option_no_throw(std::string(token));
        if (option != nullptr && option->get_type_size() != 0 &&
            token.find('=') == std::string_view::npos) {
          ++i;
        }
        continue;
      }
      std::vector<std::string> close = ClosestNames(flag, flags);
      if (close.empty()) return "";
      return fmt::format("unknown option '{}' for '{}'{}", flag, path, DidYouMean(close));
    }
    if (token.starts_with("-")) continue;
    const CLI::App* sub = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* s : command->get_subcommands({})) {
      names.push_back(s->get_name());
      if (s->get_name() == token) sub = s;
    }
    if (sub != nullptr) {
      command = sub;
      path += " " + sub->get_name();
      continue;
    }
    if (names.empty()) continue;  // a positional argument of a leaf command
    return fmt::format("unknown command '{}' for '{}'{}", token, path,
                       DidYouMean(ClosestNames(token, names)));
  }
  return "";
}

namespace {

// The other spellings of option `name` in the commands the line selected: "--config" is also
// "--exp", and a line giving each once has given the option twice.
std::string OtherSpellings(const CLI::App& app, const std::string& name) {
  const CLI::Option* option = app.get_option_no_throw(name);
  if (option == nullptr) {
    for (const CLI::App* sub : app.get_subcommands()) {
      if (std::string found = OtherSpellings(*sub, name); !found.empty()) return found;
    }
    return "";
  }
  std::string others;
  for (const std::string& long_name : option->get_lnames()) {
    if ("--" + long_name == name) continue;
    others += (others.empty() ? "" : ", ") + ("--" + long_name);
  }
  return others;
}

}  // namespace

std::string ReadableParseError(const CLI::App& app, const CLI::ParseError& error) {
  const std::string message = error.what();
  static const std::regex kGivenTwice(R"(^(\S+): At Most 1 required but received (\d+)$)");
  std::smatch m;
  if (std::regex_match(message, m, kGivenTwice)) {
    const std::string others = OtherSpellings(app, m[1].str());
    return fmt::format("{}{} was given {} times; give it once", m[1].str(),
                       others.empty() ? "" : " (or " + others + ", the same option)", m[2].str());
  }
  // CLI11's file checks, worded as the readers word the same problems.
  static const std::regex kMissing(R"(^\S+: (?:File|Path) does not exist: (.*)$)");
  if (std::regex_match(message, m, kMissing)) {
    return fmt::format("{}: no such file or directory", m[1].str());
  }
  static const std::regex kDirectory(R"(^\S+: File is actually a directory: (.*)$)");
  if (std::regex_match(message, m, kDirectory)) {
    return fmt::format("{}: is a directory, not a regular file", m[1].str());
  }
  return message;
}

void RefuseEmptyOutputPaths(CLI::App& app) {
  static const std::vector<std::string> kOutputs = {
      "output", "html", "xlsx", "csv", "csv-dir", "export_config", "export-config"};
  const CLI::Validator non_empty(
      [](std::string& value) {
        return value.empty() ? std::string("an empty path names no file to write") : std::string();
      },
      "", "");
  for (CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      if (std::find(kOutputs.begin(), kOutputs.end(), name) != kOutputs.end()) {
        option->check(non_empty);
        break;
      }
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) RefuseEmptyOutputPaths(*sub);
}

std::vector<const char*> HelpCommandAsFlag(int argc, const char* const* argv) {
  std::vector<const char*> out(argv, argv + argc);
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    out.erase(out.begin() + 1);
    out.push_back("--help");
  }
  return out;
}

std::string HelpCommandHint(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 3 || std::string_view(argv[1]) != "help") return "";
  std::vector<const char*> words(argv, argv + argc);
  words.erase(words.begin() + 1);  // the line without "help": the commands to describe
  for (size_t i = 1; i < words.size(); ++i) {
    // Only command words: a flag after them belongs to the help request itself.
    if (std::string_view(words[i]).starts_with("-")) words.resize(i);
  }
  const std::string hint = CommandLineHint(app, static_cast<int>(words.size()), words.data());
  return hint.starts_with("unknown command") ? hint : "";
}

}  // namespace sextant::cli
