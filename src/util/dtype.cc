#include "util/dtype.h"

#include <algorithm>
#include <cctype>

namespace sextant {

double DTypeBytes(DType t) {
  switch (t) {
    case DType::kFP32:
    case DType::kTF32: return 4.0;
    case DType::kBF16:
    case DType::kFP16: return 2.0;
    case DType::kFP8:
    case DType::kMXFP8: return 1.0;
    case DType::kFP4: return 0.5;
  }
  return 4.0;
}

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kFP32: return "fp32";
    case DType::kTF32: return "tf32";
    case DType::kBF16: return "bf16";
    case DType::kFP16: return "fp16";
    case DType::kFP8: return "fp8";
    case DType::kMXFP8: return "mxfp8";
    case DType::kFP4: return "fp4";
  }
  return "fp32";
}

std::optional<DType> ParseDType(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "fp32" || n == "float32" || n == "float" || n == "torch.float32") return DType::kFP32;
  if (n == "tf32") return DType::kTF32;
  if (n == "bf16" || n == "bfloat16" || n == "torch.bfloat16") return DType::kBF16;
  if (n == "fp16" || n == "float16" || n == "half" || n == "torch.float16") return DType::kFP16;
  if (n == "fp8" || n == "e4m3" || n == "e5m2" || n == "hybrid" || n == "float8" ||
      n == "tensorwise" || n == "delayed" || n == "blockwise" || n == "rowwise")
    return DType::kFP8;
  if (n == "mxfp8" || n == "mx8") return DType::kMXFP8;
  if (n == "fp4" || n == "mxfp4" || n == "nvfp4") return DType::kFP4;
  return std::nullopt;
}

}  // namespace sextant
