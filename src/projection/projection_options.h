// Options of `sextant projection ...` beyond the job itself (Primus's flag set).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sextant {

struct ProjectionOptions {
  std::string config;
  std::string primus_path;
  int target_nodes = 0;
  int target_ep = 0;
  std::optional<int> benchmark_gpus;  // benchmark modes only
  std::string hardware_config;
  std::string profiling_mode = "simulate";  // no GPU needed; "benchmark" needs one
  std::string memory_mode = "simulate";
  std::optional<double> memory_safety_margin;  // --memory-mode benchmark only (Primus: 0.05)
  std::string gemm_backend = "analytical";     // the only GEMM model ("origami" = the same)
  // --calibration (alias --gemm-timings): a `sextant calibrate` file, or measured kernels
  // (trace, TraceLens table, GEMM timings) fitted on the spot; see projection/calibration_file.h
  std::string calibration;
  std::string gpu_arch;
  double gpu_clock_mhz = 0;
  std::string schedule;  // empty = from the config, else auto
  bool enable_zero_bubble = false;
  bool enable_deepep = false;
  int sync_free_stage = -1;  // --sync-free-stage; -1: not given (the configuration's stage)
  int num_virtual_stages = 0;
  int64_t micro_batch_size = 0;
  int64_t global_batch_size = 0;
  std::string save_benchmark;
  std::string load_benchmark;
  std::vector<std::string> traces;   // --profiling-mode trace only
  std::vector<int> scaling_nodes;    // rows of the scaling table; empty: the default
  std::vector<std::string> compare;  // traces of the run itself, printed against the projection
  std::string chrome_trace;
  std::string pp_dump;
  bool json = false;
  // Primus's launcher flags (primus/core/launcher/parser.py): --export_config writes the
  // merged configuration; --backend_path and --data_path change nothing a projection reads.
  std::string export_config;
  std::string backend_path;
  std::string data_path;
};

}  // namespace sextant
