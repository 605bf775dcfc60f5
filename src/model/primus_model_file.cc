#include "model/primus_model_file.h"

#include <cctype>
#include <filesystem>
#include <set>

#include "util/error.h"

namespace sextant {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxExtendsDepth = 32;
// Limits that keep hostile moe_layer_freq expressions from exhausting memory or the stack.
constexpr size_t kMaxPatternEntries = size_t{1} << 20;
constexpr int kMaxPatternNesting = 64;

// Later wins; nested maps merge key by key.
void MergeInto(YAML::Node& base, const YAML::Node& over) {
  for (const auto& kv : over) {
    const std::string key = kv.first.as<std::string>();
    YAML::Node existing = base[key];
    if (existing && existing.IsMap() && kv.second.IsMap()) {
      MergeInto(existing, kv.second);
    } else {
      base[key] = YAML::Clone(kv.second);
    }
  }
}

YAML::Node LoadChain(const fs::path& path, std::set<std::string>& active, int depth) {
  const std::string file = path.string();
  if (depth > kMaxExtendsDepth) ThrowUserError({file}, "extends", "inheritance chain is too deep");
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  const std::string id = ec ? file : canonical.string();
  if (!active.insert(id).second) ThrowUserError({file}, "extends", "inheritance cycle");
  if (!fs::is_regular_file(path, ec)) ThrowUserError({file}, "", "no such model file");

  YAML::Node doc;
  try {
    doc = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    SourceLocation where{file, e.mark.line >= 0 ? e.mark.line + 1 : -1,
                         e.mark.column >= 0 ? e.mark.column + 1 : -1, -1};
    ThrowUserError(where, "", e.msg);
  }
  if (doc.IsNull()) doc = YAML::Node(YAML::NodeType::Map);
  if (!doc.IsMap()) ThrowUserError({file}, "", "a model file must be a map of model arguments");

  YAML::Node merged(YAML::NodeType::Map);
  for (const char* key : {"bases", "extends"}) {
    const YAML::Node parents = doc[key];
    if (!parents) continue;
    if (!parents.IsSequence() && !parents.IsScalar()) {
      ThrowUserError({file}, key, "must be a file name or a list of file names");
    }
    std::vector<std::string> names;
    if (parents.IsScalar()) {
      names.push_back(parents.as<std::string>());
    } else {
      for (const auto& p : parents) {
        if (!p.IsScalar()) ThrowUserError({file}, key, "entries must be file names");
        names.push_back(p.as<std::string>());
      }
    }
    for (const std::string& name : names) {
      YAML::Node parent = LoadChain(path.parent_path() / name, active, depth + 1);
      MergeInto(merged, parent);
    }
  }
  YAML::Node own(YAML::NodeType::Map);
  for (const auto& kv : doc) {
    const std::string k = kv.first.as<std::string>();
    if (k != "extends" && k != "bases") own[k] = kv.second;
  }
  MergeInto(merged, own);
  active.erase(id);
  return merged;
}

// A tiny evaluator for the list expressions Megatron accepts for --moe-layer-freq:
// sums of list literals, optionally repeated with "*N", inside optional parentheses.
class PatternParser {
 public:
  PatternParser(const std::string& text, const std::string& where) : text_(text), where_(where) {}

  std::vector<bool> Parse() {
    std::vector<bool> out = Sum();
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text");
    return out;
  }

 private:
  std::vector<bool> Sum() {
    std::vector<bool> out = Term();
    for (SkipSpace(); Peek() == '+'; SkipSpace()) {
      ++pos_;
      std::vector<bool> more = Term();
      if (out.size() + more.size() > kMaxPatternEntries) Fail("pattern too long");
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

  std::vector<bool> Term() {
    SkipSpace();
    std::vector<bool> base;
    if (Peek() == '(') {
      ++pos_;
      if (++depth_ > kMaxPatternNesting) Fail("parentheses nested too deeply");
      base = Sum();
      --depth_;
      Expect(')');
    } else if (Peek() == '[') {
      ++pos_;
      for (SkipSpace(); Peek() != ']'; SkipSpace()) {
        const int64_t v = Number();
        if (v != 0 && v != 1) Fail("list entries must be 0 or 1");
        if (base.size() >= kMaxPatternEntries) Fail("pattern too long");
        base.push_back(v == 1);
        SkipSpace();
        if (Peek() == ',')
          ++pos_;
        else if (Peek() != ']')
          Fail("expected ',' or ']'");
      }
      ++pos_;
    } else {
      Fail("expected a list");
    }
    SkipSpace();
    if (Peek() == '*') {
      ++pos_;
      const int64_t times = Number();
      if (times < 0 ||
          (times > 0 && base.size() > kMaxPatternEntries / static_cast<size_t>(times))) {
        Fail("pattern too long");
      }
      std::vector<bool> repeated;
      for (int64_t i = 0; i < times; ++i) repeated.insert(repeated.end(), base.begin(), base.end());
      return repeated;
    }
    return base;
  }

  int64_t Number() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start || pos_ - start > 9) Fail("expected a number");
    return std::stoll(text_.substr(start, pos_ - start));
  }

  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  [[noreturn]] void Fail(const std::string& why) const {
    ThrowUserError({where_}, "moe_layer_freq",
                   why + " at character " + std::to_string(pos_ + 1) + " of \"" + text_ + "\"");
  }

  const std::string& text_;
  const std::string& where_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

YAML::Node LoadPrimusModelFile(const std::string& path) {
  std::set<std::string> active;
  return LoadChain(fs::path(path), active, 0);
}

std::vector<bool> ParseMoeLayerFrequency(const YAML::Node& value, int64_t num_layers,
                                         const std::string& where) {
  if (num_layers <= 0) ThrowUserError({where}, "num_layers", "must be positive");
  std::vector<bool> pattern;
  if (value.IsSequence()) {
    for (const auto& v : value) {
      const std::string s = v.IsScalar() ? v.as<std::string>() : "";
      if (s != "0" && s != "1")
        ThrowUserError({where}, "moe_layer_freq", "list entries must be 0 or 1");
      pattern.push_back(s == "1");
    }
  } else if (value.IsScalar()) {
    std::string text = value.as<std::string>();
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    if (AllDigits(text)) {
      if (text.size() > 9) ThrowUserError({where}, "moe_layer_freq", "frequency out of range");
      const int64_t n = std::stoll(text);
      if (n <= 0) ThrowUserError({where}, "moe_layer_freq", "frequency must be positive");
      for (int64_t i = 0; i < num_layers; ++i) pattern.push_back(i % n == 0);
      return pattern;
    }
    pattern = PatternParser(text, where).Parse();
  } else {
    ThrowUserError({where}, "moe_layer_freq", "must be an integer or a list");
  }
  if (static_cast<int64_t>(pattern.size()) != num_layers) {
    ThrowUserError({where}, "moe_layer_freq",
                   "pattern has " + std::to_string(pattern.size()) + " entries but num_layers is " +
                       std::to_string(num_layers));
  }
  return pattern;
}

}  // namespace sextant
