#include "projection/calibration_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "hardware/hardware_library.h"
#include "util/error.h"

namespace sextant {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

CalibrationFile MI300XFile() {
  const GpuSpec& gpu = *FindGpu("MI300X");
  CalibrationFile c;
  c.gpu = gpu.name;
  c.sources = {"a.json.gz", "b.json.gz"};
  c.fit.table = EfficiencyTable::Default(gpu);
  SizeClassTable bf16 = c.fit.table.GemmTable(DType::kBF16);
  bf16.fractions[0] = 0.25;
  c.fit.table.SetGemmTable(DType::kBF16, bf16);
  c.fit.table.SetAttentionFractions(0.3, 0.2);
  c.fit.table.set_min_kernel_seconds(4.5e-6);
  return c;
}

TEST(CalibrationFileTest, WhatIsWrittenIsReadBack) {
  const CalibrationFile read =
      ParseCalibrationFile(CalibrationFileJson(MI300XFile()), "MI300X.json");
  EXPECT_EQ(read.gpu, "MI300X");
  EXPECT_EQ(read.sources.size(), 2u);
  EXPECT_DOUBLE_EQ(read.fit.table.GemmFraction(DType::kBF16, 1e6), 0.25);
  EXPECT_DOUBLE_EQ(read.fit.table.attention_forward_fraction(), 0.3);
  EXPECT_DOUBLE_EQ(read.fit.table.attention_backward_fraction(), 0.2);
  EXPECT_NEAR(read.fit.table.min_kernel_seconds(), 4.5e-6, 1e-15);
  // Everything else of the default table survives too: the fp8 ramp and the HBM classes.
  const EfficiencyTable d = EfficiencyTable::Default(*FindGpu("MI300X"));
  EXPECT_DOUBLE_EQ(read.fit.table.GemmFraction(DType::kFP8, 1e12),
                   d.GemmFraction(DType::kFP8, 1e12));
  EXPECT_DOUBLE_EQ(read.fit.table.HbmFraction(50e6), d.HbmFraction(50e6));
  EXPECT_EQ(read.fit.table.overlapped_epilogue(), d.overlapped_epilogue());
}

TEST(CalibrationFileTest, OtherFilesAndVersionsAreRefusedByName) {
  auto message = [](const std::string& text) {
    try {
      ParseCalibrationFile(text, "cal.json");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{\"traceEvents\": []}").find("format"), std::string::npos);
  EXPECT_NE(message(R"({"format":"sextant-calibration","version":2,"gpu":"MI300X","table":{}})")
                .find("version"),
            std::string::npos);
  std::string json = CalibrationFileJson(MI300XFile());
  json.replace(json.find("\"fraction\": 0.25"), 16, "\"fraction\": 1.5");
  const std::string bad = message(json);
  EXPECT_NE(bad.find("table.gemm.bf16[0].fraction"), std::string::npos) << bad;
  EXPECT_NE(bad.find("cal.json"), std::string::npos) << bad;
  // A fraction no kernel class runs at (a 1 ms kernel would take 1000 s), and a misspelt key
  // whose value would otherwise be ignored.
  json = CalibrationFileJson(MI300XFile());
  json.replace(json.find("\"fraction\": 0.25"), 16, "\"fraction\": 1e-9");
  const std::string tiny = message(json);
  EXPECT_NE(tiny.find("table.gemm.bf16[0].fraction"), std::string::npos) << tiny;
  EXPECT_NE(tiny.find("below 0.001"), std::string::npos) << tiny;
  json = CalibrationFileJson(MI300XFile());
  json.replace(json.find("\"forward_fraction\""), 18, "\"forward_fraktion\"");
  const std::string misspelt = message(json);
  EXPECT_NE(misspelt.find("table.attention.forward_fraktion"), std::string::npos) << misspelt;
  json = CalibrationFileJson(MI300XFile());
  json.replace(json.find("\"hbm\""), 5, "\"hmb\"");
  EXPECT_NE(message(json).find("table.hmb"), std::string::npos) << message(json);
}

TEST(CalibrationFileTest, ATableFittedOnOneGpuIsRefusedForAnother) {
  const std::string path = WriteTemp("mi300x_cal.json", CalibrationFileJson(MI300XFile()));
  std::string source;
  const EfficiencyTable t = CalibratedTable(path, *FindGpu("MI300X"), &source);
  EXPECT_DOUBLE_EQ(t.GemmFraction(DType::kBF16, 1e6), 0.25);
  EXPECT_NE(source.find("fitted on a.json.gz, b.json.gz"), std::string::npos) << source;
  try {
    CalibratedTable(path, *FindGpu("H100"), &source);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("fitted on MI300X, the job runs on H100"),
              std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sextant
