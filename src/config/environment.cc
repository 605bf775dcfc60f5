#include "config/environment.h"

#include <cstdlib>

namespace sextant {

Environment Environment::Process() {
  Environment env;
  env.use_process_ = true;
  return env;
}

Environment Environment::FromMap(std::map<std::string, std::string> variables) {
  Environment env;
  for (auto& [name, value] : variables) env.variables_.emplace(name, std::move(value));
  return env;
}

std::optional<std::string> Environment::Get(std::string_view name) const {
  read_.emplace(name);
  if (use_process_) {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }
  auto it = variables_.find(name);
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sextant
