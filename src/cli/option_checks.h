// Checks for numeric command-line values, with messages a person reads at a glance (CLI11's
// own range checks print the type's whole range: "not in range 0 to 1.797e308" in full).
#pragma once

#include <CLI/CLI.hpp>

namespace sextant::cli {

// An integer of at least `minimum`: "--top 0" → "must be a whole number of at least 1, got 0".
CLI::Validator AtLeast(long long minimum);

// An integer in [minimum, maximum]: "--interval-ms 99999999999999" → "must be a whole number
// from 1 to 3600000, got '99999999999999'" (for options held in an int, where CLI11 would say
// only "Could not convert").
CLI::Validator WholeNumberBetween(long long minimum, long long maximum);

// A number greater than zero: "--gpu-clock-mhz -5" → "must be a number above 0, got '-5'".
CLI::Validator Positive();

// A path that is not empty: `--config "$EXP"` with EXP unset must not fall back to a default.
CLI::Validator NonEmptyPath();

// A pipeline schedule in any spelling ParseScheduleKind accepts, or "auto" / "all"; an unknown
// name gets the known ones and the closest.
CLI::Validator ScheduleName();

}  // namespace sextant::cli
