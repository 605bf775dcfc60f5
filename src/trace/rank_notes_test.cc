#include "trace/rank_notes.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

TEST(NoteShape, NumbersStandingAloneBecomeHashesWordsWithDigitsStay) {
  EXPECT_EQ(NoteShape("1311 short kernels, 6.246 ms (3.71% of total time) on H100 in fp8"),
            "# short kernels, # ms (#% of total time) on H100 in fp8");
  EXPECT_EQ(NoteShape("no numbers"), "no numbers");
  // A version string is one number and a tail of text, not three numbers.
  EXPECT_EQ(NoteShape("cuDNN 9.2.1"), "cuDNN #.1");
}

TEST(MergeRankNotes, OneNoteIsLabelledWithItsRank) {
  EXPECT_EQ(MergeRankNotes({{3, "20 of 76 kernels"}}), "rank 3: 20 of 76 kernels");
}

TEST(MergeRankNotes, NumbersThatDifferBecomeRangesAndEqualOnesStay) {
  // The per-rank short-kernel notes of modded-nanogpt's ranks 0-2 (trace report).
  const std::vector<RankNote> notes = {
      {0, "1311 short kernels, 6.246 ms (3.71% of total time) of 76"},
      {1, "1309 short kernels, 6.268 ms (3.72% of total time) of 76"},
      {2, "1290 short kernels, 6.170 ms (3.67% of total time) of 76"},
  };
  EXPECT_EQ(MergeRankNotes(notes),
            "ranks 0-2 (numbers are min-max over them): 1290-1311 short kernels, 6.170-6.268 ms "
            "(3.67-3.72% of total time) of 76");
}

TEST(MergeRankNotes, RanksAreListedAsRunsAndNumbersComparedByValue) {
  // 9.5 < 10: compared as numbers, not as text; 1.0 and 1.00 are the same value.
  const std::vector<RankNote> notes = {
      {7, "10 ms, 1.0 x"}, {5, "9.5 ms, 1.00 x"}, {0, "12 ms, 1.0 x"}, {1, "11 ms, 1.0 x"}};
  EXPECT_EQ(MergeRankNotes(notes),
            "ranks 0-1, 5, 7 (numbers are min-max over them): 9.5-12 ms, 1.0 x");
}

TEST(MergeRankNotes, NotesWithEqualNumbersNeedNoRangeExplanation) {
  EXPECT_EQ(MergeRankNotes({{0, "20 of 76"}, {1, "20 of 76"}}), "ranks 0-1: 20 of 76");
}

}  // namespace
}  // namespace sextant
