#include "hardware/gpu_spec.h"

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {

double GpuSpec::PeakTflops(DType dtype) const {
  auto it = peak_dense_tflops.find(dtype);
  if (it == peak_dense_tflops.end()) {
    ThrowUserError(fmt::format("GPU {} has no {} tensor-core peak", name, DTypeName(dtype)));
  }
  return it->second;
}

}  // namespace sextant
