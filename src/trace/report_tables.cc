#include "trace/report_tables.h"

namespace sextant {

const std::vector<TablePresentation>& ReportTablePresentations() {
  using P = TablePresentation;
  static const std::vector<P> tables = {
      {"ranks", "Overview", false, 1000, P::kTop, {"file"}, 60},
      {"rank_spread", "GPU timeline", false, 100, P::kTop, {}, 60},
      {"gpu_timeline", "GPU timeline", false, 100, P::kTop, {}, 60},
      {"recompute_timeline", "GPU timeline", false, 100, P::kTop, {}, 60},
      {"iterations", "GPU timeline", false, P::kNone, P::kTop, {}, 60},
      {"iteration_stats", "GPU timeline", false, 100, P::kTop, {}, 60},
      {"annotations", "GPU timeline", false, P::kTop, P::kTop, {"cpu_ms"}, 40},
      {"kernel_categories", "Kernels", false, 100, P::kTop, {}, 60},
      {"kernels", "Kernels", true, P::kTop, P::kTop, {"min_us", "parent_op"}, 70},
      {"kernel_summary", "Kernels", true, P::kNone, P::kTop, {}, 60},
      {"short_kernels_summary",
       "Kernels",
       true,
       P::kTop,
       5,
       {"input_strides", "concrete_inputs"},
       40},
      // Drawn as a histogram on the page (RenderReportHtml), not as a 100-row table.
      {"short_kernel_histogram", "", false, P::kNone, P::kTop, {}, 60, true},
      {"ops_by_category", "Operators", false, P::kTop, P::kTop, {"cumulative_percent"}, 60},
      {"launcher_ops", "Operators", true, P::kNone, P::kTop, {}, 60},
      {"ops_by_name", "Operators", true, P::kTop, P::kTop, {}, 50},
      {"ops", "Operators", true, P::kNone, P::kTop, {}, 60},
      {"op_tree", "Operators", true, P::kNone, P::kTop, {}, 60},
      // The widest (argument records of every launcher): launcher_ops and ops show the same
      // calls on the page.
      {"launcher_op_args", "", false, P::kNone, P::kTop, {}, 60},
      // As wide, with every call's kernel sequence: for spreadsheets and scripts.
      {"unified_perf", "", false, P::kNone, P::kTop, {}, 60},
      {"roofline", "Roofline", false, P::kTop, 8, {"input_types", "family", "note"}, 40},
      {"gemm_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"sdpa_fwd_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"sdpa_bwd_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"unary_elementwise_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"binary_elementwise_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"reduce_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"reduce_bwd_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"norm_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"rmsnorm_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"rope_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"inference_attention_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"moe_unfused_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"conv_fwd_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      {"conv_bwd_calls", "Roofline", true, P::kNone, P::kTop, {}, 60},
      // Per rank: --top rows, at most 10 (the cross-rank tables summarise several ranks).
      {"collectives", "Communication", false, P::kTop, 10, {"min_us", "max_us"}, 60},
      // Every kernel's own metadata, for spreadsheets and TraceLens's scripts.
      {"collective_calls", "", false, P::kNone, P::kTop, {}, 60},
      {"cross_rank_summary", "Communication", false, 100, P::kTop, {}, 60},
      {"cross_rank_collectives", "Communication", false, 10, P::kTop, {}, 60},
      // Mean only on the console; median, min and max are in the machine outputs.
      {"collective_sync",
       "Communication",
       false,
       10,
       P::kTop,
       {"process_group", "latency_us_median", "latency_us_min", "latency_us_max",
        "start_skew_us_median", "start_skew_us_min", "start_skew_us_max", "end_skew_us_median",
        "end_skew_us_min", "end_skew_us_max", "algbw_gbps_mean", "algbw_gbps_median",
        "algbw_gbps_min", "algbw_gbps_max", "busbw_gbps_median", "busbw_gbps_min",
        "busbw_gbps_max"},
       60},
      // Least wait first: the ranks the others wait for lead.
      {"stragglers", "Communication", false, P::kTop, 16, {}, 60},
      {"idle", "Idle time and launches", false, 6, P::kTop, {}, 60},
      {"launch", "Idle time and launches", false, 100, P::kTop, {}, 60},
      // XPlane profiles: every device activity with its HLO instruction (TraceLens's JAX
      // report is built from it).
      {"xla_activities", "", false, P::kNone, P::kTop, {}, 60},
  };
  return tables;
}

const TablePresentation* FindTablePresentation(std::string_view name) {
  for (const TablePresentation& t : ReportTablePresentations()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace sextant
