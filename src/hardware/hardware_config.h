// Hardware-config files. Two schemas, may be combined in one file:
//   hardware_config:   Primus's keys (node_bw, pod_bw, bw_eff, ...), with Primus's meaning
//   hardware:          Sextant's own: a library GPU by name, field overrides, cluster tiers
// Keys are checked: an unknown key is a UserError naming file, line, key and close matches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hardware/gpu_spec.h"

namespace sextant {

// Parses `text` (YAML) as a hardware config on top of `base`; `file_name` is used in
// error messages only. LoadHardwareConfig (hardware_library.h) reads a file and calls this.
ClusterSpec ParseHardwareConfig(std::string_view text, const std::string& file_name,
                                const ClusterSpec& base);

// The keys each schema accepts, for documentation and suggestions.
// Whether `text` is a hardware config rather than a job: a YAML map whose top-level keys are
// all hardware_config (Primus) or hardware (Sextant). False for text that is not YAML. For
// telling such files apart in a folder of experiment configs.
bool IsHardwareConfigText(std::string_view text);

const std::vector<std::string>& PrimusHardwareConfigKeys();
const std::vector<std::string>& SextantHardwareKeys();
const std::vector<std::string>& SextantClusterKeys();

}  // namespace sextant
