#include "projection/benchmark_artifact.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

std::string Artifact(const std::string& name) {
  return ReadFile(std::string(SEXTANT_SOURCE_DIR) + "/tests/data/benchmark/" + name);
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseBenchmarkArtifact(text, "a.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "accepted";
}

// The layer times of DeepSeek's H800 trace as --save-benchmark kept them: the attention piece
// is 4.370 ms forward (corpus traces/llm_training/deepseek-v3-h800-ep64, the per-piece figures
// docs/projection-performance.md prints), and they read back in seconds with the artifact named
// as their file.
TEST(BenchmarkArtifactTest, LayerTimesReadBackAsSaved) {
  const BenchmarkArtifact a = ParseBenchmarkArtifact(Artifact("layers_artifact.json"), "a.json");
  ASSERT_NE(a.layers, nullptr);
  EXPECT_EQ(a.step, nullptr);
  EXPECT_TRUE(a.layers->moe);
  EXPECT_EQ(a.layers->layers, 4);
  ASSERT_FALSE(a.layers->pieces.empty());
  EXPECT_EQ(a.layers->pieces[0].name, "attn");
  EXPECT_NEAR(a.layers->pieces[0].forward_s, 4.370e-3, 1e-6);
  EXPECT_EQ(a.layers->files.at(0), "a.json (saved from train.json)");
  EXPECT_EQ(a.layers->device_file, "a.json");
  EXPECT_EQ(a.layers->device_name, "NVIDIA H800");

  const BenchmarkArtifact again = ParseBenchmarkArtifact(BenchmarkArtifactJson(a), "b.json");
  ASSERT_NE(again.layers, nullptr);
  EXPECT_DOUBLE_EQ(again.layers->forward_s, a.layers->forward_s);
  EXPECT_EQ(again.layers->pieces.size(), a.layers->pieces.size());
  EXPECT_EQ(again.sources, a.sources);
}

// modded-nanogpt's eight H100 ranks measured per step: 4 iterations of one micro-batch each,
// the step 41.66 ms (the mean ProfilerStep docs/projection-performance.md reports).
TEST(BenchmarkArtifactTest, StepPhasesReadBackAsSaved) {
  const BenchmarkArtifact a = ParseBenchmarkArtifact(Artifact("step_artifact.json"), "s.json");
  ASSERT_NE(a.step, nullptr);
  EXPECT_EQ(a.layers, nullptr);
  EXPECT_EQ(a.step->ranks, 8);
  EXPECT_EQ(a.step->world_size, 8);
  EXPECT_EQ(a.step->micro_batches, 1);
  EXPECT_NEAR(a.step->step_s, 41.66e-3, 1e-5);
  EXPECT_EQ(a.step->device_name, "NVIDIA H100 80GB HBM3");
}

TEST(BenchmarkArtifactTest, WhatNoMeasurementGivesIsRefusedByKey) {
  const std::string good = Artifact("step_artifact.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(ErrorOf("{\"traceEvents\": []}").find("'format'"), std::string::npos);
  EXPECT_NE(ErrorOf(with("\"version\": 1", "\"version\": 2")).find("'version'"), std::string::npos);
  EXPECT_NE(
      ErrorOf(with("\"micro_batches\": 1", "\"micro_batches\": 0")).find("step.micro_batches"),
      std::string::npos);
  EXPECT_NE(ErrorOf(with("\"forward_ms\": 9.", "\"forward_ms\": -9.")).find("step.forward_ms"),
            std::string::npos);
  EXPECT_NE(ErrorOf(with("\"other_ms\"", "\"other_mss\"")).find("step.other_mss"),
            std::string::npos);
  // Exposed communication is part of the communication.
  EXPECT_NE(ErrorOf(with("\"exposed_communication_ms\": 9.", "\"exposed_communication_ms\": 99."))
                .find("step.exposed_communication_ms"),
            std::string::npos);
  // Both kinds, or neither.
  EXPECT_NE(ErrorOf(with("\"step\":", "\"layers\": {}, \"step\":")).find("'layers'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"format\": \"sextant-benchmark\", \"version\": 1, "
                    "\"device_name\": \"\", \"sources\": []}")
                .find("one of"),
            std::string::npos);
  // Another version is refused as such, whatever keys it has.
  EXPECT_NE(ErrorOf(with("\"version\": 1", "\"version\": 2, \"new_key\": 0")).find("'version'"),
            std::string::npos);
  // More rank traces than the run had GPUs.
  EXPECT_NE(ErrorOf(with("\"ranks\": 8", "\"ranks\": 9")).find("step.ranks"), std::string::npos);
}

// The layer totals are the pieces' sums, and a layer computes something.
TEST(BenchmarkArtifactTest, LayerTotalsMustBeTheirPiecesSums) {
  const std::string good = Artifact("layers_artifact.json");
  std::string edited = good;
  const size_t at = edited.find("\"forward_ms\": 24.");
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, 18, "\"forward_ms\": 34.");
  EXPECT_NE(ErrorOf(edited).find("layers.forward_ms"), std::string::npos) << ErrorOf(edited);
  EXPECT_NE(ErrorOf(edited).find("is not the sum of the pieces'"), std::string::npos);
}

}  // namespace
}  // namespace sextant
