// Writes a configuration tree back as YAML: what Primus's --export_config saves (the merged
// configuration a run used), so that the file reads back to the same values.
#pragma once

#include <string>

#include "config/config_node.h"

namespace sextant {

// Block-style YAML of `node`: maps in their key order, lists one item per line, scalars as
// written (quoted where the source quoted them or where YAML would read them otherwise), null
// as `null`.
std::string ToYaml(const ConfigNode& node);

}  // namespace sextant
