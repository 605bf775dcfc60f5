#include "cli/option_checks.h"

#include <charconv>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "parallel/schedule_kind.h"

namespace sextant::cli {

namespace {

// The whole text as an integer; nullopt for anything else ("2.5", "", "1e3", out of range).
std::optional<long long> WholeNumber(const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

CLI::Validator AtLeast(long long minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        const std::optional<long long> value = WholeNumber(text);
        if (!value && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
          return fmt::format("'{}' is too large (at most {})", text,
                             std::numeric_limits<long long>::max());
        }
        if (!value || *value < minimum) {
          return fmt::format("must be a whole number of at least {}, got '{}'", minimum, text);
        }
        return "";
      },
      fmt::format("INT>={}", minimum));
}

CLI::Validator WholeNumberBetween(long long minimum, long long maximum) {
  return CLI::Validator(
      [minimum, maximum](std::string& text) -> std::string {
        const std::optional<long long> value = WholeNumber(text);
        if (!value || *value < minimum || *value > maximum) {
          return fmt::format("must be a whole number from {} to {}, got '{}'", minimum, maximum,
                             text);
        }
        return "";
      },
      fmt::format("INT in [{}, {}]", minimum, maximum));
}

CLI::Validator NonEmptyPath() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "is empty: give a file (leave the option out for the default)" : "";
      },
      "PATH");
}

CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end || !(value > 0)) {
          return fmt::format("must be a number above 0, got '{}'", text);
        }
        return "";
      },
      "NUMBER>0");
}

CLI::Validator ScheduleName() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        ScheduleKind kind;
        if (text == "auto" || text == "all" || LookupScheduleKind(text, &kind)) return "";
        return UnknownScheduleMessage(text);
      },
      "SCHEDULE");
}

}  // namespace sextant::cli
