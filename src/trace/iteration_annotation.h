// The iteration annotations LLM inference servers write around each forward step, and the
// attention statistics they carry. vLLM (with TraceLens's detailed annotation) names a step
// "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489...)",
// SGLang "step[DECODE bs=64 g_sq=64 g_sqsq=64 g_sqsk=131072 g_sk=131072]", ATOM
// "decode[bs=32 tok=128 d=32 sqsq=512 sqsk=262144 sk=65536]": for the context (prefill)
// requests and for the generation (decode) requests of the step, the sum over requests of
// the query length sq, of the key length sk, of sq² and of sq·sk. Those sums are what the
// FLOPs and bytes of a batch of variable-length attention need (TraceLens
// TraceUtils/annotation_utils.py, IterationAnnotation.chunk_stats). A native annotation
// without them ("execute_context_2(14721)_generation_0(0)", "step[DECODE bs=64]") gives none.
//
// An op takes the annotation that encloses it as TraceLens's apply_annotation decides
// (Trace2Tree/trace_to_tree.py): of the user annotations, the earliest-starting one that
// starts no later than the op and ends strictly after it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/event_store.h"

namespace sextant {

struct ChunkStats {
  int64_t c_sq = 0, c_sk = 0, c_sqsq = 0, c_sqsk = 0;  // context (prefill) requests
  int64_t g_sq = 0, g_sk = 0, g_sqsq = 0, g_sqsk = 0;  // generation (decode) requests
};

// The statistics of a detailed vLLM, SGLang or ATOM iteration annotation, read as TraceLens
// reads them (its regular expressions and _safe_int); nullopt for any other text (a native
// annotation) and when one of the eight sums passes 10^18, which no real step does.
std::optional<ChunkStats> ParseChunkStats(std::string_view annotation);

// The user annotations of a trace, searchable by the host window they enclose.
class AnnotationIndex {
 public:
  explicit AnnotationIndex(const TraceData& trace);
  // The name (string id) of the earliest-starting annotation with start <= begin_ns and
  // end > end_ns; 0 when none encloses the window.
  uint32_t Enclosing(int64_t begin_ns, int64_t end_ns) const;

 private:
  std::vector<int64_t> start_;    // by start time (ties: trace order)
  std::vector<int64_t> max_end_;  // running maximum of the ends, in that order
  std::vector<uint32_t> name_;
};

// The annotation enclosing each CPU event. A captured op that graph launches replayed
// (graph_capture.h) is placed at the first launch that replayed one of its kernels, as
// TraceLens places a merged capture tree at its graph launch.
class StepAnnotations {
 public:
  explicit StepAnnotations(const TraceData& trace);
  // The name id of the annotation enclosing trace.cpu[cpu_index], 0 if none.
  uint32_t Of(size_t cpu_index) const;

 private:
  const TraceData& trace_;
  AnnotationIndex index_;
  std::vector<int32_t> replayed_by_;  // per CPU event: the graph launch, or -1
};

}  // namespace sextant
