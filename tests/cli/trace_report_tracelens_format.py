#!/usr/bin/env python3
"""`trace report --format tracelens`: the --csv files and --xlsx sheets carry TraceLens's
names and column headers (generate_perf_report_pytorch), so its users' scripts read them, and
their rows agree with TraceLens's own reports of the same traces (an H100 eager trace with CPU
ops, the MI210 GPU-only trace, and the MI300X ResNet trace whose report TraceLens split by
activation recomputation): times and counts to 1e-4 relative, FLOPs, bytes and rates to 1e-3. kernel_summary's "Parent op
category" column is the one documented omission; a GPU-only report has no op columns and no
op-category file, in TraceLens's and here. The inference sheets of the two graph-replay
reports (vLLM's and SGLang's attention, vLLM's unfused MoE, aiter's RMSNorms, SGLang's rotary
embedding) agree with TraceLens's inference report the same way, but for its num_kernels
column. A JAX profile (XPlane) gets TraceLens's JAX report (generate_perf_report_jax), whose
tables agree with its reference CSVs the same way."""
import os
import tempfile
import zipfile

import harness
from tracelens_compare import FILES, JAX_FILES, SHEETS, compare

t = harness.Test()
base = "traces/TraceLens/"
cases = [("h100/gaunernst_bert-small-uncased__1016001.json.gz",
          "h100/gaunernst_bert-small-uncased__1016001_perf_report_csvs"),
         ("mi210/gpu_only_trace.json.gz", "mi210/gpu_only_trace_perf_report_csvs"),
         # Its first GEMM is a bmm: TraceLens's GEMM sheet then lists param: B first.
         ("h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
          "h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs"),
         ("mi300/resnet_act_checkpoint.json.gz",
          "mi300/resnet_act_checkpoint_recompute_perf_report_csvs")]
for trace, reference in cases:
    # A sheet is written when the trace has calls of its family (none without CPU ops).
    files = [f for f in FILES
             if not (f in SHEETS or f.startswith(("ops_", "unified_", "coll_"))) or
             os.path.exists(t.corpus(base + reference + "/" + f + ".csv"))]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "csv")
        t.sextant("trace", "report", t.corpus(base + trace), "--format", "tracelens", "--csv",
                  out, "--xlsx", os.path.join(d, "report.xlsx"))
        t.check(sorted(os.listdir(out)) == sorted(f + ".csv" for f in files),
                f"{trace}: files {sorted(os.listdir(out))}")
        compared = 0
        for name in files:
            # The recompute report was written without the short-kernel study.
            reference_csv = t.corpus(base + reference + "/" + name + ".csv")
            if not os.path.exists(reference_csv):
                continue
            compared += 1
            for problem in compare(os.path.join(out, name + ".csv"), reference_csv, name):
                t.check(False, f"{trace} {name}: {problem}")
        t.check(compared >= 2, f"{trace}: {compared} files compared")
        with zipfile.ZipFile(os.path.join(d, "report.xlsx")) as z:
            workbook = z.read("xl/workbook.xml").decode()
            for name in files:
                t.check(f'name="{name}"' in workbook, f"{trace}: no sheet {name}: {workbook}")
# An XLA profile (XPlane) gets TraceLens's JAX report: one report over the file's two GPUs,
# every table equal to TraceLens's reference, op_conv's FLOP columns by definition aside.
jax = base + "mi300/jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"
jax_reference = base + "mi300/jax_conv_minimal_perf_report_csvs/"
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "csv")
    t.sextant("trace", "report", t.corpus(jax), "--format", "tracelens", "--csv", out, "--xlsx",
              os.path.join(d, "report.xlsx"))
    t.check(sorted(os.listdir(out)) == sorted(f + ".csv" for f in JAX_FILES),
            f"XPlane: files {sorted(os.listdir(out))}")
    for name in JAX_FILES:
        for problem in compare(os.path.join(out, name + ".csv"),
                               t.corpus(jax_reference + name + ".csv"), name):
            t.check(False, f"XPlane {name}: {problem}")
    with zipfile.ZipFile(os.path.join(d, "report.xlsx")) as z:
        workbook = z.read("xl/workbook.xml").decode()
        # Excel's sheet names hold 31 characters (kernel_launchers_summary_by_cat).
        for name in JAX_FILES:
            t.check(f'name="{name[:31]}"' in workbook, f"XPlane: no sheet {name[:31]}")
# The inference sheets of the two graph-replay references (each trace with its capture trace):
# files of the same name, rows equal to TraceLens's.
inference = base + "inference/"
for trace, capture, sheets in [
        ("sglang_decode/sglang_Qwen3-8B_decode.json.gz",
         "sglang_decode/capture_traces/bs_32_rank0.json.gz",
         ["InferenceAttention_fwd", "RMSNorm_fwd", "RoPE_fwd"]),
        ("vllm_prefilldecode_piecewise/graph_execution.json.gz",
         "vllm_prefilldecode_piecewise/capture_traces/"
         "graph_capture_rank_0.1773709679453551615.pt.trace.json.gz",
         ["InferenceAttention_fwd", "MoE_unfused_fwd", "RMSNorm_fwd"])]:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "csv")
        t.sextant("trace", "report", t.corpus(inference + trace), "--capture",
                  t.corpus(inference + capture), "--format", "tracelens", "--csv", out)
        reference = os.path.dirname(inference + trace) + "/perf_csvs/"
        for name in sheets:
            for problem in compare(os.path.join(out, name + ".csv"),
                                   t.corpus(reference + name + ".csv"), name):
                t.check(False, f"{trace} {name}: {problem}")
# Several ranks: a rank<N>/ directory each, inside a --csv directory that did not exist yet.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "new")
    t.sextant("trace", "report", t.corpus(base + cases[0][0]), t.corpus(base + cases[2][0]),
              "--format", "tracelens", "--csv", out)
    t.check(os.path.isdir(out) and len(os.listdir(out)) == 2,
            f"several ranks: {os.listdir(out) if os.path.isdir(out) else 'no directory'}")
    t.check(all(os.path.exists(os.path.join(out, r, "gpu_timeline.csv")) for r in os.listdir(out)),
            f"several ranks: {[os.listdir(os.path.join(out, r)) for r in os.listdir(out)]}")
# The format names files and sheets: without --csv or --xlsx it changes nothing, and says so.
run = t.sextant("trace", "report", t.corpus(base + cases[0][0]), "--format", "tracelens")
t.check("--format tracelens names the --csv files and --xlsx sheets" in run.stderr, run.stderr)
t.passed()
