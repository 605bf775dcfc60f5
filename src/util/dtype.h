// Numeric formats used for weights, gradients, optimizer state and GEMM inputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sextant {

enum class DType { kFP32, kTF32, kBF16, kFP16, kFP8, kMXFP8, kFP4 };

// Storage size in bytes per element (TF32 is stored as FP32; MX formats carry their
// per-32-element scale separately and are counted as 1 byte / 0.5 byte here).
double DTypeBytes(DType t);
std::string_view DTypeName(DType t);  // "fp32", "bf16", ...
// Accepts the spellings found in Megatron/Primus/TorchTitan configs ("bf16", "bfloat16",
// "float32", "fp8", "e4m3", "hybrid", "mxfp8", ...). Returns nullopt for unknown names.
std::optional<DType> ParseDType(std::string_view name);

}  // namespace sextant
