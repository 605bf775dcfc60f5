// "Did you mean ...?" for every name a user types: configuration keys, model, GPU and file
// names. One policy everywhere, so the same typo gets the same help whatever was misspelt.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

// Levenshtein distance: insertions, deletions and substitutions each cost 1.
size_t EditDistance(std::string_view a, std::string_view b);

// EditDistance(a, b) when it is at most `max_distance`, else max_distance + 1, in
// O(length x max_distance) time and with an early exit once every path costs more: a 2 MB name
// against a short one is refused by the length difference alone.
size_t BoundedEditDistance(std::string_view a, std::string_view b, size_t max_distance);

// Names longer than this (folded) get no suggestions: no library name or key comes near it,
// and comparing a pasted paragraph against every candidate is wasted time.
inline constexpr size_t kMaxSuggestedNameLength = 100;

// Equal letter for letter, ignoring ASCII case ("1f1b" and "1F1B"; "Megatron" and "megatron").
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

// Lower-cased with '-', '_', '.' and ' ' dropped, so "h100-sxm" and "H100_SXM" compare equal,
// and "Llama-3.1-8B" and "llama3.1_8b". The libraries look names up by this spelling.
std::string FoldName(std::string_view name);

// Up to `max_results` candidates close to `name`, nearest first (ties in candidate order,
// duplicates once): those whose folded spelling is within a third of the folded name's
// length (at least 2 edits) of it, or contains it / is contained in it (distance 0). A name
// longer than kMaxSuggestedNameLength has none.
std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates,
                                      size_t max_results = 3);

// "; did you mean a, b?" for a non-empty list, "" otherwise: the tail of an error message.
std::string DidYouMean(const std::vector<std::string>& close);

}  // namespace sextant
