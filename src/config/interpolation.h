// ${VAR} and ${VAR:default} substitution in configuration values, as Primus experiment
// files use it ("tensor_model_parallel_size: ${PRIMUS_TP:1}").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config_node.h"
#include "config/environment.h"

namespace sextant {

// Replaces every ${NAME} / ${NAME:default} in `text`. A default written in matching
// quotes ("" or '') is unquoted, so ${TOKEN:""} gives the empty string. An unset variable
// without a default is a UserError at `where` naming `key` and the variable; so is a
// "${" without its closing brace or an invalid variable name.
// The names of the variables whose value (not default) was used go to `from_environment`.
std::string Interpolate(std::string_view text, const Environment& env, const SourceLocation& where,
                        std::string_view key, std::vector<std::string>* from_environment = nullptr);

// Applies Interpolate to every scalar of the tree; `key` in errors is the dotted path. A value
// that came from the environment is located at the variable ("$PRIMUS_EP via file:44:35"), so
// a later error about it names what the user set.
void InterpolateTree(ConfigNode& root, const Environment& env);

}  // namespace sextant
