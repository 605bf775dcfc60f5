#include "job/job.h"

namespace sextant {

bool LoraSpec::Targets(std::string_view module) const {
  if (!enabled) return false;
  for (const std::string& t : target_modules) {
    if (t == module) return true;
  }
  return false;
}

std::string PrecisionRecipe::GemmDescription() const {
  auto describe = [&](DType d) {
    if (d == DType::kFP8) {
      if (fp8_blockwise) return std::string("fp8 (blockwise scaling)");
      return std::string(fp8_current_scaling ? "fp8 (current scaling)" : "fp8 (delayed scaling)");
    }
    return std::string(DTypeName(d));
  };
  if (ExpertGemm() != gemm) {
    return describe(gemm) + ", the routed experts' in " + describe(ExpertGemm());
  }
  return describe(gemm);
}

bool PrecisionRecipe::UseFp8Recipe(std::string_view recipe) {
  if (recipe != "delayed" && recipe != "tensorwise" && recipe != "blockwise" && recipe != "mxfp8") {
    return false;
  }
  // MXFP8 scales each block of 32 values by a power of two read from the block itself
  // (OCP MX specification v1.0): no amax pass over the tensor, no history.
  gemm = recipe == "mxfp8" ? DType::kMXFP8 : DType::kFP8;
  fp8_current_scaling = recipe == "tensorwise" || recipe == "blockwise";
  fp8_blockwise = recipe == "blockwise";
  return true;
}

int64_t TrainingSettings::NumMicroBatches(int dp) const {
  const int64_t per_step = micro_batch_size * (dp > 0 ? dp : 1);
  if (per_step <= 0 || global_batch_size <= 0) return 1;
  return global_batch_size / per_step;
}

}  // namespace sextant
