#include "snapshot/call_site.h"

#include <gtest/gtest.h>

namespace sextant {
namespace {

MemorySnapshot WithStack(std::vector<StackFrame> frames) {
  MemorySnapshot s;
  s.stacks.emplace_back();
  std::vector<FrameId> ids;
  for (auto& f : frames) {
    ids.push_back(static_cast<FrameId>(s.frames.size()));
    s.frames.push_back(std::move(f));
  }
  s.stacks.push_back(ids);
  return s;
}

TEST(CallSiteTest, HidesTheFramesMemoryVizHides) {
  // Names and files from MemoryViz.js frameFilter's two lists.
  EXPECT_TRUE(IsViewerHiddenFrame({"torch::unwind::unwind()", "??", 0}));
  EXPECT_TRUE(IsViewerHiddenFrame({"_PyEval_EvalFrameDefault", "??", 0}));
  EXPECT_TRUE(IsViewerHiddenFrame({"__libc_start_main", "??", 0}));
  EXPECT_TRUE(IsViewerHiddenFrame({"wrapper_CUDA_index", "RegisterCUDA.cpp", 0}) == false);
  EXPECT_TRUE(IsViewerHiddenFrame({"x", "aten/src/ATen/RegisterCUDA.cpp", 0}));
  EXPECT_TRUE(IsViewerHiddenFrame({"run_mod", "/usr/src/python/Python/pythonrun.c", 1743}));
  EXPECT_FALSE(IsViewerHiddenFrame({"forward", "/home/u/model.py", 12}));
}

TEST(CallSiteTest, PicksInnermostUserPythonFrame) {
  MemorySnapshot s = WithStack({
      {"torch::unwind::unwind()", "??", 0},
      {"c10::cuda::CUDACachingAllocator::malloc", "CUDACachingAllocator.cpp", 0},
      {"_call_impl", "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 1750},
      {"forward", "/home/u/proj/cs336_basics/transformer.py", 39},
      {"main", "/home/u/proj/train.py", 7},
  });
  EXPECT_EQ(CallSiteLabel(s, 1), "forward (cs336_basics/transformer.py:39)");
  EXPECT_EQ(VisibleFrames(s, 1, 10).size(), 4u);
  EXPECT_EQ(VisibleFrames(s, 1, 2).size(), 2u);
  EXPECT_EQ(CallSiteLabel(s, 0), "<no stack recorded>");
  // A site's frames start at the call site and run outwards: the allocator and torch frames
  // inside it are what every allocation shares, not what tells them apart.
  const std::vector<FrameId> site = SiteFrames(s, 1, 10);
  ASSERT_EQ(site.size(), 2u);
  EXPECT_EQ(s.frames[site[0]].name, "forward");
  EXPECT_EQ(s.frames[site[1]].name, "main");
  EXPECT_EQ(SiteFrames(s, 1, 1).size(), 1u);
}

// torch.compile: Inductor's generated module (its cache directory, c<hash>.py) calls the
// kernels; the site is the user's frame that called the compiled code.
TEST(CallSiteTest, SkipsCodeThatTorchCompileGenerated) {
  MemorySnapshot s = WithStack({
      {"call", "/tmp/torchinductor_u/kb/ckbfydn2m64lvgma55vodrvsjlhakooozavr3a3hzladpnb3e2jl.py",
       1822},
      {"forward", "/home/u/proj/cs336_basics/transformer.py", 208},
  });
  EXPECT_EQ(CallSiteLabel(s, 1), "forward (cs336_basics/transformer.py:208)");
  MemorySnapshot custom_dir = WithStack({
      {"call", "/scratch/cache/kb/ckbfydn2m64lvgma55vodrvsjlhakooozavr3a3hzladpnb3e2jl.py", 7},
      {"forward", "/home/u/model.py", 3},
  });
  EXPECT_EQ(CallSiteLabel(custom_dir, 1), "forward (u/model.py:3)");
}

TEST(CallSiteTest, FallsBackToTorchThenNativeFrames) {
  MemorySnapshot torch_only = WithStack({
      {"empty_cache", "/venv/site-packages/torch/cuda/memory.py", 218},
  });
  EXPECT_EQ(CallSiteLabel(torch_only, 1), "empty_cache (cuda/memory.py:218)");
  MemorySnapshot native = WithStack({
      {"torch::unwind::unwind()", "??", 0},
      {"at::native::empty_cuda", "??", 0},
  });
  EXPECT_EQ(CallSiteLabel(native, 1), "at::native::empty_cuda");
  // An autograd-engine thread: no Python; the first frame past allocator and ATen names it,
  // without its argument list.
  MemorySnapshot autograd = WithStack({
      {"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char)",
       "CUDACachingAllocator.cpp", 0},
      {"at::native::new_zeros(at::Tensor const&)", "??", 0},
      {"void at::meta::common_checks_baddbmm_bmm<at::meta::structured_bmm>(at::Tensor const&)",
       "??", 0},
      {"torch::autograd::generated::IndexBackward0::apply(std::vector<at::Tensor>&&)", "??", 0},
      {"torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
       "??", 0},
  });
  EXPECT_EQ(CallSiteLabel(autograd, 1), "torch::autograd::generated::IndexBackward0::apply");
  EXPECT_EQ(FrameLabel({"torch::cuda::(anonymous namespace)::gather_with_cpp()", "x.cpp", 0}),
            "torch::cuda::(anonymous namespace)::gather_with_cpp (x.cpp)");
  EXPECT_EQ(FrameLabel({"void f<a, b>(int)", "??", 0}), "f<a, b>");
  EXPECT_EQ(FrameLabel({"forward", "/a/b/c.py", 3}), "forward (b/c.py:3)");
}

}  // namespace
}  // namespace sextant
