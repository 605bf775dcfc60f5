#include "parallel/pipeline_layout.h"

#include <cctype>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {
namespace {

constexpr const char* kKey = "pipeline_model_parallel_layout";
constexpr size_t kMaxExpandedLength = 1 << 20;  // hostile "(t*1000000)*1000000" stays bounded

[[noreturn]] void Fail(const std::string& layout, size_t pos, const std::string& why) {
  ThrowUserError(SourceLocation{}, kKey,
                 fmt::format("{} at character {} of \"{}\"", why, pos + 1, layout));
}

class Expander {
 public:
  explicit Expander(const std::string& s) : s_(s) {}

  std::string Run() {
    std::string out = Sequence(0);
    if (pos_ != s_.size()) Fail(s_, pos_, "unbalanced ')'");
    return out;
  }

 private:
  // sequence := (item)* ; item := symbol ['*' N] | '(' sequence ')' '*' N
  std::string Sequence(int depth) {
    if (depth > 32) Fail(s_, pos_, "parentheses nested too deeply");
    std::string out;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ')') break;
      if (c == ' ' || c == '\'' || c == '"' || c == ',') {
        ++pos_;
        continue;
      }
      std::string item;
      if (c == '(') {
        const size_t open = pos_++;
        item = Sequence(depth + 1);
        if (pos_ >= s_.size() || s_[pos_] != ')') Fail(s_, open, "unclosed '('");
        ++pos_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else {
        Fail(s_, pos_, fmt::format("unexpected '{}' (expected E, t, m, L, |, (, ) or *N)", c));
      }
      const int64_t n = Repeat();
      if (item.size() * static_cast<size_t>(n) + out.size() > kMaxExpandedLength) {
        Fail(s_, pos_, "layout expands to more than a million symbols");
      }
      for (int64_t i = 0; i < n; ++i) out += item;
    }
    return out;
  }

  int64_t Repeat() {
    if (pos_ >= s_.size() || s_[pos_] != '*') return 1;
    const size_t star = pos_++;
    int64_t n = 0;
    size_t digits = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      n = n * 10 + (s_[pos_++] - '0');
      if (++digits > 7) Fail(s_, star, "repeat count too large");
    }
    if (digits == 0) Fail(s_, star, "'*' must be followed by a count");
    return n;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<LayoutStage> ParsePipelineLayout(const std::string& layout) {
  // A search places the same few layouts hundreds of thousands of times (validation, memory,
  // timing): the last one parsed on this thread is kept.
  thread_local std::string last_layout;
  thread_local std::vector<LayoutStage> last_stages;
  if (!last_stages.empty() && layout == last_layout) return last_stages;
  const std::string flat = Expander(layout).Run();
  std::vector<LayoutStage> stages(1);
  for (char c : flat) {
    switch (c) {
      case '|': stages.emplace_back(); break;
      case 't': ++stages.back().decoder_layers; break;
      case 'm': ++stages.back().mtp_layers; break;
      case 'E': stages.back().embedding = true; break;
      case 'L': stages.back().loss = true; break;
      default: break;
    }
  }
  last_layout = layout;
  last_stages = stages;
  return stages;
}

std::string BalancedPipelineLayout(int64_t layers, int64_t stages) {
  const int64_t slots = layers + 2;  // + embedding + loss
  if (stages < 2 || layers < 0 || slots < stages) return "";
  const int64_t base = slots / stages;
  const int64_t extra = slots % stages;  // stages that take base + 1 slots
  std::string out;
  for (int64_t i = 0; i < stages; ++i) {
    // The first stage takes one of the larger shares, the others go to the last stages, so
    // the short stages sit right after the first (as in Primus's DeepSeek-V3 PP16 VPP2 layout).
    const bool larger = extra > 0 && (i == 0 || i >= stages - (extra - 1));
    const int64_t n = base + (larger ? 1 : 0) - (i == 0 ? 1 : 0) - (i == stages - 1 ? 1 : 0);
    if (i > 0) out += '|';
    if (i == 0) out += 'E';
    if (n > 0) out += "t*" + std::to_string(n);
    if (i == stages - 1) out += ",L";
  }
  return out;
}

std::string AccountedPipelineLayout(int64_t layers, int64_t stages, bool embedding, bool loss) {
  const int64_t slots = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  if (!(embedding || loss) || stages < 1 || layers < 0 || slots % stages != 0) return "";
  const int64_t per_stage = slots / stages;
  std::string out;
  for (int64_t i = 0; i < stages; ++i) {
    const bool first = i == 0 && embedding, last = i == stages - 1 && loss;
    const int64_t n = per_stage - (first ? 1 : 0) - (last ? 1 : 0);
    if (i > 0) out += '|';
    if (first) out += 'E';
    if (n > 0) out += "t*" + std::to_string(n);
    if (last) out += ",L";
  }
  return out;
}

std::string AccountedLayoutRefusal(int64_t layers, int pp, int vpp, bool embedding, bool loss) {
  return fmt::format(
      "num_layers {} plus {} is not divisible by pipeline_model_parallel_size {} x virtual "
      "stages {}",
      layers,
      embedding && loss ? "the embedding and the loss"
      : embedding       ? "the embedding"
                        : "the loss",
      pp, vpp);
}

}  // namespace sextant
