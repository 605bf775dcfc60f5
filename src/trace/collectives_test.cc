#include "trace/collectives.h"
#include "trace/gpu_timeline.h"

#include <cmath>

#include <gtest/gtest.h>

#include "trace/trace_test_util.h"

namespace sextant {
namespace {

// The record_param_comms arguments PyTorch writes around an NCCL call.
std::string CommsArgs(const char* name, int64_t in_nelems, int64_t out_nelems, const char* dtype,
                      const char* pg, int64_t seq) {
  return fmt::format(
      R"("Collective name": "{}", "In msg nelems": {}, "Out msg nelems": {}, "Group size": 4, )"
      R"("dtype": "{}", "Process Group Name": "{}", "Seq": {})",
      name, in_nelems, out_nelems, dtype, pg, seq);
}

// Rank 3 of 4 (µs). The NCCL kernels carry no metadata themselves; they take it from the
// record_param_comms op around their launch.
//   allreduce  bf16 1 Mi elements, pg 0, seq 7: kernel [20, 120)   100 µs
//   allgather  fp32 256 Ki -> 1 Mi elements, pg 1: kernel [130, 170) 40 µs
//   allreduce  same size, pg 0, seq 8: kernel [180, 330)            150 µs
//   a GEMM, a SendRecv kernel with no metadata [400, 410), and an all-reduce still running
//   from before the profiled window (no launch in the trace) [0, 5)
TraceData CommTrace() {
  return KinetoTraceBuilder()
      .CpuOp("record_param_comms", 0, 10,
             CommsArgs("allreduce", 1 << 20, 1 << 20, "BFloat16", "0", 7))
      .Launch(2, 2, 1)
      .CpuOp("record_param_comms", 30, 10,
             CommsArgs("_allgather_base", 1 << 18, 1 << 20, "Float", "1", 2))
      .Launch(31, 2, 2)
      .CpuOp("record_param_comms", 50, 10,
             CommsArgs("allreduce", 1 << 20, 1 << 20, "BFloat16", "0", 8))
      .Launch(51, 2, 3)
      .Launch(70, 2, 4)
      .Launch(90, 2, 99)
      .Kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 20, 100,
              1, /*stream=*/20)
      .Kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 130, 40, 2,
              /*stream=*/20)
      .Kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 180,
              150, 3, /*stream=*/20)
      .Kernel("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 200, 50, 4)
      .Kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", 400, 10, 99,
              /*stream=*/21)
      .Kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 5,
              98, /*stream=*/20)
      .TopLevel("distributedInfo", R"({"backend": "nccl", "rank": 3, "world_size": 4})")
      .Parse();
}

TEST(CollectivesTest, InstancesTakeTheirLaunchingOpsMetadata) {
  TraceData t = CommTrace();
  std::vector<CollectiveInstance> c = ExtractCollectives(t, 3);
  // The GEMM is not one, and the all-reduce queued before the window is left out as the GPU
  // timeline leaves it out: a rank that queued more of them would shift the matching.
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].rank, 3);
  EXPECT_EQ(c[0].type, "allreduce");
  EXPECT_EQ(c[0].process_group, "0");
  EXPECT_EQ(c[0].seq, 7);
  EXPECT_EQ(c[0].bytes, 2 << 20);  // 1 Mi elements x 2 bytes: the input size
  EXPECT_EQ(c[0].group_size, 4);
  EXPECT_EQ(c[0].ts_ns, 20'000);
  EXPECT_EQ(c[0].dur_ns, 100'000);
  EXPECT_EQ(c[1].type, "allgather");
  EXPECT_EQ(c[1].process_group, "1");
  EXPECT_EQ(c[1].bytes, 4 << 20);  // all-gather counts its output: 1 Mi x 4 bytes
  EXPECT_EQ(c[2].seq, 8);
  // No metadata: the type from the kernel name, the group from distributedInfo.
  EXPECT_EQ(c[3].type, "send_recv");
  EXPECT_EQ(c[3].process_group, "");
  EXPECT_EQ(c[3].seq, -1);
  EXPECT_EQ(c[3].bytes, -1);
  EXPECT_EQ(c[3].group_size, 4);
}

// Without metadata, NCCL's all-to-all kernel is ncclKernel_SendRecv: the c10d range around its
// launch ("nccl:all_to_all", as in HTA's trace_filter ranks) names the collective.
TEST(CollectivesTest, WithoutMetadataTheC10dRangeNamesTheCollective) {
  TraceData t = KinetoTraceBuilder()
                    .CpuOp("nccl:all_to_all", 0, 10)
                    .Launch(1, 1, 1)
                    .CpuOp("nccl:_all_gather_base", 20, 10)
                    .Launch(21, 1, 2)
                    .Launch(40, 1, 3)
                    .Kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 5, 3, 1)
                    .Kernel("ncclDevKernel_AllGather_RING_LL", 25, 3, 2)
                    .Kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 45, 3, 3)
                    .Parse();
  std::vector<CollectiveInstance> c = ExtractCollectives(t, 0);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].type, "all_to_all");
  EXPECT_EQ(c[1].type, "allgather");
  EXPECT_EQ(c[2].type, "send_recv");  // no range: the kernel's own name
}

TEST(CollectivesTest, SummaryBandwidthsFromTheMeanDuration) {
  std::vector<CollectiveSummary> s = SummarizeCollectives(ExtractCollectives(CommTrace(), 3));
  ASSERT_EQ(s.size(), 3u);
  // Largest total first: allreduce 100 + 150 = 250 µs, allgather 40, send_recv 10.
  EXPECT_EQ(s[0].type, "allreduce");
  EXPECT_EQ(s[0].count, 2);
  EXPECT_EQ(s[0].total_ns, 250'000);
  EXPECT_EQ(s[0].min_ns, 100'000);
  EXPECT_EQ(s[0].max_ns, 150'000);
  // 2 MiB over the mean 125 µs = 16.777216 GB/s; bus: x 2(4-1)/4 = 1.5.
  EXPECT_NEAR(s[0].algbw_gbps, 16.777216, 1e-9);
  EXPECT_NEAR(s[0].busbw_gbps, 25.165824, 1e-9);
  // 4 MiB over 40 µs = 104.8576 GB/s; bus: x (4-1)/4.
  EXPECT_EQ(s[1].type, "allgather");
  EXPECT_NEAR(s[1].algbw_gbps, 104.8576, 1e-9);
  EXPECT_NEAR(s[1].busbw_gbps, 78.6432, 1e-9);
  // Unknown size: no bandwidth.
  EXPECT_EQ(s[2].type, "send_recv");
  EXPECT_EQ(s[2].algbw_gbps, 0);
  EXPECT_EQ(s[2].busbw_gbps, 0);
}

TEST(CollectivesTest, CommunicationKernelsBeyondNccl) {
  EXPECT_TRUE(IsCommunicationKernelName("ncclDevKernel_AllGather_RING_LL(x)"));
  EXPECT_TRUE(IsCommunicationKernelName("void rcclGenericKernel<1>(x)"));
  EXPECT_TRUE(IsCommunicationKernelName("void deep_ep::internode::dispatch<false, 8>(int)"));
  EXPECT_TRUE(IsCommunicationKernelName("void dpsk::ep::internode::combine<false, 8>(int)"));
  EXPECT_TRUE(IsCommunicationKernelName("void vllm::cross_device_reduce_2stage<bf16, 8>(int)"));
  EXPECT_TRUE(IsCommunicationKernelName("mscclpp::allreduce6<bf16>"));
  EXPECT_TRUE(IsCommunicationKernelName("nvshmemi_barrier_all_kernel()"));
  // MoE compute named after the same model is not communication.
  EXPECT_FALSE(IsCommunicationKernelName("void dpsk::grouped_gemm::cuda::fp8_gemm<8>(int)"));
  EXPECT_FALSE(IsCommunicationKernelName("void cuda::per_token_cast_to_fp8<bf16, 128>(int)"));
  // DeepEP's layout kernel only counts tokens per rank and expert (csrc/kernels/layout.cu).
  EXPECT_FALSE(
      IsCommunicationKernelName("void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(int)"));
  EXPECT_FALSE(
      IsCommunicationKernelName("void deep_ep::layout::get_dispatch_layout<256, 32, 8>(int)"));
}

TEST(CollectivesTest, TypesAndElementSizes) {
  EXPECT_EQ(NormalizeCollectiveType(
                "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "reduce_scatter");
  EXPECT_EQ(
      NormalizeCollectiveType("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
      "allgather");
  EXPECT_EQ(NormalizeCollectiveType("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"),
            "generic");
  EXPECT_EQ(NormalizeCollectiveType("all_to_allv"), "all_to_all");
  EXPECT_EQ(NormalizeCollectiveType("broadcast"), "broadcast");
  EXPECT_EQ(NormalizeCollectiveType("barrier"), "barrier");
  EXPECT_EQ(NormalizeCollectiveType(""), "unknown");
  // DeepEP's expert-parallel exchanges and vLLM's custom all-reduce.
  EXPECT_EQ(NormalizeCollectiveType("void deep_ep::internode::dispatch<false, 8, true, 8>(int)"),
            "ep_dispatch");
  EXPECT_EQ(NormalizeCollectiveType("void dpsk::ep::internode::combine<false, 8>(int)"),
            "ep_combine");
  EXPECT_EQ(NormalizeCollectiveType("void dpsk::ep::internode::cached_notify<false>(int)"),
            "ep_notify");
  EXPECT_EQ(NormalizeCollectiveType("void deep_ep::intranode::notify_dispatch<8>(int*)"),
            "ep_notify");
  EXPECT_EQ(NormalizeCollectiveType("void vllm::cross_device_reduce_1stage<bf16, 8>(int)"),
            "allreduce");
  // PyTorch's symmetric-memory all-reduce (TraceLens's B200 eager trace): neither the return
  // type nor the namespace in parentheses is the collective.
  EXPECT_EQ(NormalizeCollectiveType("void (anonymous namespace)::multimem_all_reduce_kernel<"
                                    "c10::BFloat16, 16>(c10::BFloat16*, unsigned long)"),
            "allreduce");
  EXPECT_EQ(NormalizeCollectiveType("void c10d::symmetric_memory::two_shot_all_reduce_kernel<"
                                    "float, 8>(float*, unsigned long)"),
            "allreduce");
  // Any return type, and template arguments that name another collective.
  EXPECT_EQ(NormalizeCollectiveType("int ncclKernel_Broadcast_RING_LL<ncclFuncAllReduce>(int)"),
            "broadcast");
  EXPECT_EQ(CollectiveDtypeBytes("Float"), 4);
  EXPECT_EQ(CollectiveDtypeBytes("BFloat16"), 2);
  EXPECT_EQ(CollectiveDtypeBytes("Half"), 2);
  EXPECT_EQ(CollectiveDtypeBytes("Long"), 8);
  EXPECT_EQ(CollectiveDtypeBytes("Float8_e4m3fn"), 1);
  EXPECT_EQ(CollectiveDtypeBytes("Byte"), 1);
  EXPECT_EQ(CollectiveDtypeBytes("ComplexFloat"), 0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_to_all", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allreduce", 1), 1.0);
}

// Kernels that carry their collective's metadata themselves (PyTorch 2.4+ on ROCm and CUDA):
// grouped by it, as TraceLens's coll_analysis does.
TEST(CollectivesTest, CallsGroupByTheKernelsOwnMetadata) {
  auto meta = [](const char* name, int64_t nelems, const char* dtype, const char* splits) {
    return fmt::format(
        R"("Collective name": "{}", "In msg nelems": {}, "Out msg nelems": {}, )"
        R"("Group size": 8, "dtype": "{}", "In split size": {}, "Out split size": {}, )"
        R"("Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]")",
        name, nelems, nelems, dtype, splits, splits);
  };
  const char* kNccl = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)";
  TraceData t =
      KinetoTraceBuilder()
          // Two all-reduces of 1 Mi bf16 elements: 100 and 300 µs.
          .Kernel(kNccl, 0, 100, 1, 4, 0, meta("allreduce", 1 << 20, "BFloat16", "\"[]\""))
          .Kernel(kNccl, 200, 300, 2, 4, 0, meta("allreduce", 1 << 20, "BFloat16", "\"[]\""))
          // An all-to-all whose splits are a JSON list, in an fp8 dtype TraceLens has no size
          // for: 50 µs.
          .Kernel(kNccl, 600, 50, 3, 4, 0, meta("all_to_all", 64, "Float8_e4m3fn", "[8, 8]"))
          // No metadata of its own: left out, although the op that launched it has some.
          .CpuOp("record_param_comms", 690, 5, meta("allreduce", 1 << 20, "BFloat16", "\"[]\""))
          .Launch(691, 1, 4)
          .Kernel(kNccl, 700, 10, 4, 4)
          .Parse();
  const std::vector<CollectiveCallGroup> calls = GroupCollectiveCalls(t);
  ASSERT_EQ(calls.size(), 2u);
  const CollectiveCallGroup& ar = calls[0];  // 400 µs before 50 µs
  EXPECT_EQ(ar.name, "allreduce");
  EXPECT_EQ(ar.process_group, "0");
  EXPECT_EQ(ar.pg_ranks, "[0, 1, 2, 3, 4, 5, 6, 7]");
  EXPECT_EQ(ar.in_split, "[]");
  EXPECT_EQ(ar.stream, 4);
  EXPECT_EQ(ar.dur_us.n, 2);
  EXPECT_DOUBLE_EQ(ar.dur_us.sum, 400);
  EXPECT_DOUBLE_EQ(ar.dur_us.mean, 200);
  EXPECT_NEAR(ar.dur_us.std, 141.42135623730951, 1e-9);  // sqrt(2 x 100^2 / (2 - 1))
  EXPECT_DOUBLE_EQ(ar.in_mib, 2.0);                      // 1 Mi x 2 B
  const CollectiveCallGroup& a2a = calls[1];
  EXPECT_EQ(a2a.in_split, "(8, 8)");        // a JSON list reads as the tuple TraceLens makes of it
  EXPECT_TRUE(std::isnan(a2a.dur_us.std));  // one call
  EXPECT_DOUBLE_EQ(a2a.in_mib, 64.0 / (1 << 20));
}

// Without any process group name and on one stream, TraceLens names the group "all"; a kernel
// not linked to its launch (no correlation or External id) is left out.
TEST(CollectivesTest, CallsWithoutAGroupNameOnOneStreamAreAll) {
  const std::string meta =
      R"("Collective name": "allreduce", "In msg nelems": 4, "Out msg nelems": 4, )"
      R"("Group size": 2, "dtype": "Float", "In split size": "[]", "Out split size": "[]", )"
      R"("Process Group Ranks": "[0, 1]")";
  const char* kNccl = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)";
  TraceData t =
      KinetoTraceBuilder()
          .Kernel(kNccl, 0, 10, 1, 4, 0, meta)
          // Unlinked: no correlation or External id at all.
          .Event(R"json({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic()", )json"
                 R"json("pid": 0, "tid": 4, "ts": 20, "dur": 30, "args": {"stream": 4, )json" +
                 meta + "}}")
          .Parse();
  const std::vector<CollectiveCallGroup> calls = GroupCollectiveCalls(t);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].process_group, "all");
  EXPECT_EQ(calls[0].dur_us.n, 1);
  EXPECT_DOUBLE_EQ(calls[0].dur_us.sum, 10);
}

}  // namespace
}  // namespace sextant
