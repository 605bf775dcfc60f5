// Long cell texts (kernel names, shapes) cut for a person to read: the console's tables and the
// HTML tables shorten them alike, so a name reads the same in both; machine outputs keep every
// character.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sextant {

// `text` cut to `max_width` bytes (0 = never) around "...": its start, and `tail_share` of the
// rest of the room from its end (none when the share is 0). No UTF-8 character is split.
std::string ShortenCell(const std::string& text, size_t max_width, double tail_share = 0);

// One column's cells, each cut to `max_width`; where different texts would then print alike,
// those cells keep more and more of their end (the tile shape or dtype at the end of a kernel
// name is often what tells two apart), until they print differently (if they can).
std::vector<std::string> ShortenColumn(const std::vector<std::string>& full, size_t max_width);

}  // namespace sextant
