// "Did you mean" suggestions for names typed by the user (GPU names, config keys).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

// Edit distance (insert/delete/substitute, each cost 1) between the two strings after
// lower-casing and dropping '-', '_' and ' ', so "h100-sxm" and "H100_SXM" are equal.
size_t NameDistance(std::string_view a, std::string_view b);

// Up to `max_results` candidates close to `name`, nearest first: those within a third of
// the name's length (at least 2 edits), or containing it / contained in it.
std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results = 3);

}  // namespace sextant
