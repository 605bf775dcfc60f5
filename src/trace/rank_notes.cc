#include "trace/rank_notes.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

namespace sextant {
namespace {

bool IsNoteDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A number starts at a digit that does not continue a word or another number ("H100",
// "fp8", "x2.5" stay text).
bool StartsNoteNumber(const std::string& text, size_t i) {
  if (!IsNoteDigit(text[i])) return false;
  if (i == 0) return true;
  const unsigned char before = static_cast<unsigned char>(text[i - 1]);
  return !std::isalnum(before) && before != '_' && before != '.';
}

// End of the number starting at `i`: digits, then a decimal point followed by digits.
size_t NoteNumberEnd(const std::string& text, size_t i) {
  while (i < text.size() && IsNoteDigit(text[i])) ++i;
  if (i + 1 < text.size() && text[i] == '.' && IsNoteDigit(text[i + 1])) {
    ++i;
    while (i < text.size() && IsNoteDigit(text[i])) ++i;
  }
  return i;
}

// The text between numbers and the numbers themselves, alternating: words[0] number[0]
// words[1] ... words[n].
struct NoteWordsAndNumbers {
  std::vector<std::string> words;
  std::vector<std::string> numbers;
};

NoteWordsAndNumbers SplitNoteText(const std::string& text) {
  NoteWordsAndNumbers s;
  std::string words;
  for (size_t i = 0; i < text.size();) {
    if (StartsNoteNumber(text, i)) {
      const size_t end = NoteNumberEnd(text, i);
      s.words.push_back(std::move(words));
      words.clear();
      s.numbers.push_back(text.substr(i, end - i));
      i = end;
    } else {
      words += text[i++];
    }
  }
  s.words.push_back(std::move(words));
  return s;
}

// "0-3, 5, 7-8" for sorted ranks.
std::string RankRuns(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : fmt::format("{}", ranks[i]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string NoteShape(const std::string& text) {
  const NoteWordsAndNumbers s = SplitNoteText(text);
  std::string shape = s.words[0];
  for (size_t i = 0; i < s.numbers.size(); ++i) shape += "#" + s.words[i + 1];
  return shape;
}

std::string MergeRankNotes(const std::vector<RankNote>& notes) {
  if (notes.empty()) return "";
  if (notes.size() == 1) return fmt::format("rank {}: {}", notes[0].rank, notes[0].text);
  std::vector<NoteWordsAndNumbers> split;
  std::vector<int64_t> ranks;
  for (const RankNote& n : notes) {
    split.push_back(SplitNoteText(n.text));
    ranks.push_back(n.rank);
  }
  const NoteWordsAndNumbers& first = split[0];
  std::string out = first.words[0];
  bool ranged = false;
  for (size_t i = 0; i < first.numbers.size(); ++i) {
    // The notes share one shape, so each holds a number in this slot; keep the spellings of
    // the least and the greatest so that their decimals stay as the note wrote them.
    const std::string* low = &first.numbers[i];
    const std::string* high = low;
    for (const NoteWordsAndNumbers& s : split) {
      const std::string& n = s.numbers.at(i);
      if (std::strtod(n.c_str(), nullptr) < std::strtod(low->c_str(), nullptr)) low = &n;
      if (std::strtod(n.c_str(), nullptr) > std::strtod(high->c_str(), nullptr)) high = &n;
    }
    if (*low == *high) {
      out += *low;
    } else {
      out += *low + "-" + *high;
      ranged = true;
    }
    out += first.words[i + 1];
  }
  return fmt::format("ranks {}{}: {}", RankRuns(ranks),
                     ranged ? " (numbers are min-max over them)" : "", out);
}

}  // namespace sextant
