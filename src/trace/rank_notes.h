// Notes that several ranks' tables make alike except for their numbers ("1311 short kernels,
// 6.246 ms" on one rank, "1309 short kernels, 6.268 ms" on the next) read as one line over
// those ranks, each number given as the range it takes, instead of one line per rank: 64
// ranks would otherwise repeat a sentence 64 times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sextant {

struct RankNote {
  int64_t rank = 0;
  std::string text;
};

// The numbers of `text` that stand alone (not part of a word such as "H100" or "fp8")
// replaced by '#': two notes with the same shape differ only in such numbers.
std::string NoteShape(const std::string& text);

// One note for notes of the same NoteShape, held by distinct ranks: "ranks 0-3, 5 (numbers
// are min-max over them): 1290-1415 short kernels, ..."; a number every note gives alike
// stays as it is. A single note is labelled "rank N: ".
std::string MergeRankNotes(const std::vector<RankNote>& notes);

}  // namespace sextant
