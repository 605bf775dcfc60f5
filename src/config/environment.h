// Where configuration reads environment variables from: the process, or a fixed map
// (tests, and callers that must not depend on the shell they run in).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace sextant {

class Environment {
 public:
  // The process environment (getenv).
  static Environment Process();
  // Only the given variables; nothing from the process.
  static Environment FromMap(std::map<std::string, std::string> variables);

  // Unset variables give nullopt; a variable set to "" gives "".
  std::optional<std::string> Get(std::string_view name) const;
  // Whether Get has been asked for `name` (by ${NAME} substitution, say), set or not.
  bool WasRead(std::string_view name) const { return read_.find(name) != read_.end(); }

 private:
  bool use_process_ = false;
  mutable std::set<std::string, std::less<>> read_;
  std::map<std::string, std::string, std::less<>> variables_;
};

}  // namespace sextant
