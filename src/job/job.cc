#include "job/job.h"

namespace sextant {

int64_t TrainingSettings::NumMicroBatches(int dp) const {
  const int64_t per_step = micro_batch_size * (dp > 0 ? dp : 1);
  if (per_step <= 0 || global_batch_size <= 0) return 1;
  return global_batch_size / per_step;
}

}  // namespace sextant
