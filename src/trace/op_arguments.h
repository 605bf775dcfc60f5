// Decoding of the argument records PyTorch stores on cpu_op events when record_shapes is on:
// "Input Dims" ([[1, 512], [], ...]), "Input type" (["c10::BFloat16", "Scalar", ...]) and
// "Concrete Inputs" (["", "False", ...]).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_store.h"
#include "util/dtype.h"

namespace sextant {

using Shape = std::vector<int64_t>;

// One shape per argument; a non-tensor or a tensor list gives an empty shape. Returns an
// empty vector for text that is not a JSON list of lists.
std::vector<Shape> ParseInputDims(std::string_view raw);
// The strings of a JSON list of strings (non-strings become "").
std::vector<std::string> ParseStringList(std::string_view raw);
// Element count of a shape (1 for a scalar shape []); saturates at the int64 limits.
int64_t NumElements(const Shape& shape);
// Bytes per element of a PyTorch dtype name ("c10::BFloat16" -> 2, "float" -> 4, "long int"
// -> 8, fp8 types -> 1); nullopt if unknown. Follows TraceLens PerfModel's dtype table.
std::optional<int> BytesPerElement(std::string_view dtype);
// TraceLens's own table (PerfModel/utils.py name2bpe), which its perf sheets price bytes with:
// case-insensitive, a Python "Scalar" argument counts 4 bytes, and bool, short and the
// capitalised aliases are unknown. Used where Sextant's tables must read as TraceLens's.
std::optional<int> TraceLensBytesPerElement(std::string_view dtype);
// The floating-point format of a PyTorch dtype name, for pricing the op with Sextant's cost
// models: BFloat16 -> bf16, Half -> fp16, float -> fp32, Float8_* -> fp8, float4 -> fp4;
// nullopt for integer, boolean and unknown types.
std::optional<DType> FloatFormat(std::string_view dtype);
// "True"/"False" argument values; nullopt if absent or not a boolean.
std::optional<bool> ParseBool(std::string_view text);
// An argument record as TraceLens's tables spell it: the Python repr of the JSON, with lists
// as tuples where TraceLens groups by the record ([[512], [141, 512], []] ->
// "((512,), (141, 512), ())", ["", "1"] -> "('', '1')") or as lists where it shows the record
// as read ("[[512], [141, 512], []]", "['', '1']"). Empty for an absent record or text that
// is not JSON.
enum class PythonSequence { kTuple, kList };
std::string PythonRepr(std::string_view raw_json, PythonSequence as = PythonSequence::kTuple);

// The argument records of one trace in their Python form (PythonRepr, tuples), for grouping
// calls as TraceLens does: each distinct record (string id) is parsed once, and records
// written with different spacing share one index. Index 0 is the empty text of an absent
// record (string id 0).
class ArgumentReprs {
 public:
  explicit ArgumentReprs(const TraceData& trace);
  uint32_t Of(uint32_t raw);
  std::string_view Text(uint32_t index) const { return texts_.Get(index); }

 private:
  static constexpr uint32_t kNotParsed = UINT32_MAX;
  const TraceData& trace_;
  std::vector<uint32_t> index_of_raw_;  // per string id of the trace
  StringPool texts_;
};

// A float as Python's repr prints it (shortest round trip, "2.0", "nan"), and a str.
std::string PyNumber(double v);
std::string PyString(std::string_view text);

}  // namespace sextant
