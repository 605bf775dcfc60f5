#!/usr/bin/env python3
"""`trace report --format tracelens`: the --csv files and --xlsx sheets carry TraceLens's
names and column headers, so its users' scripts read them, and their rows agree with every
TraceLens reference report in the corpus that has its trace beside it: the eager reports
(generate_perf_report_pytorch) of the five H100 and three MI300X model traces, the MI210
GPU-only trace, the normalization-layer test, the torch.compile Triton trace and the MI300X
ResNet trace whose report TraceLens split by activation recomputation; the two graph-replay
inference reports (SGLang, vLLM; read with their capture traces); and the JAX report
(generate_perf_report_jax) of the XPlane conv profile. Every table of those reports is
compared row by row, but for the inference layout's tables named below with the reason
(tests/cli/tracelens_compare.py: times and counts to 1e-4 relative, FLOPs, bytes and rates to
1e-3, each on top of the allowance for TraceLens's float microsecond timestamps derived from
the trace; the cumulative shares of rows of equal time in any of their orders). Every table
Sextant writes is one of the reference's, but for the kernel tables the recompute and
inference reports were written without. The documented omissions (kernel_summary's "Parent
op category", compute specs, UIDs, ROCm transpose flags, an upsampling's extra shapes) and
differences (Triton kernels without a perf model, op_conv's FLOP count) are the comparator's.
A GPU-only report has no op tables, in TraceLens's and here. On failure the test lists every
difference it found (the first 40)."""
import os
import tempfile
import zipfile

import harness
from tracelens_compare import Timestamps, compare, read

t = harness.Test()
base = "traces/TraceLens/"
# Written without TraceLens's kernel summary and short kernel study (the recompute report), or
# by its inference report, which has neither.
NO_KERNEL_TABLES = {"kernel_summary", "short_kernel_histogram", "short_kernels_summary"}
# Not compared, where the inference report's layout (generate_perf_report_pytorch_inference)
# differs from the eager one Sextant writes (docs/trace.md): its unified_perf_summary moves the
# kernels of vLLM's MoE pseudo ops out of vllm::moe_forward and counts the captured ops' CPU
# time, which is capture time here; SGLang's UnaryElementwise splits aten::copy_ calls by their
# kernel count and prices sgl_kernel::silu_and_mul, an extension op without a perf model in
# Sextant. Its ops_summary and ops_summary_by_category, split by parent_module, are compared
# summed over it.
INFERENCE_LAYOUT = {"unified_perf_summary"}


def eager(stem):
    return (f"{stem}.json.gz", [], f"{stem}_perf_report_csvs", set(), set())


cases = [eager("h100/gaunernst_bert-small-uncased__1016001"),
         eager("h100/Falconsai_nsfw_image_detection__1016002"),
         # Its first GEMM is a bmm: TraceLens's GEMM sheet then lists param: B first.
         eager("h100/Qwen_Qwen1.5-0.5B-Chat__1016005"),
         eager("h100/facebook_timesformer-base-finetuned-k400__1016002"),
         eager("h100/google_owlv2-large-patch14-ensemble__1016001"),
         eager("mi210/gpu_only_trace"),
         eager("mi300/Qwen_Qwen1.5-0.5B-Chat__1016005"),
         eager("mi300/facebook_timesformer-base-finetuned-k400__1016002"),
         eager("mi300/google_owlv2-large-patch14-ensemble__1016001"),
         eager("perf_model_normalization/normalization_layer_test"),
         # TraceLens writes its short_kernels_summary of no rows as an empty file, Sextant
         # with a header.
         eager("torch_compile_triton/trace"),
         ("mi300/resnet_act_checkpoint.json.gz", [],
          "mi300/resnet_act_checkpoint_recompute_perf_report_csvs", NO_KERNEL_TABLES, set()),
         ("inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
          ["inference/sglang_decode/capture_traces/bs_32_rank0.json.gz"],
          "inference/sglang_decode/perf_csvs", NO_KERNEL_TABLES,
          INFERENCE_LAYOUT | {"UnaryElementwise"}),
         ("inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
          ["inference/vllm_prefilldecode_piecewise/capture_traces/"
           "graph_capture_rank_0.1773709679453551615.pt.trace.json.gz"],
          "inference/vllm_prefilldecode_piecewise/perf_csvs", NO_KERNEL_TABLES, INFERENCE_LAYOUT),
         # An XLA profile gets TraceLens's JAX report: one report over the file's two GPUs.
         ("mi300/jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb", [],
          "mi300/jax_conv_minimal_perf_report_csvs", set(), set())]
# A reference without its trace: the multi-rank collective report of eight ranks not in the
# corpus.
WITHOUT_TRACE = {"mi300/llama_70b_fsdp_nccl_analysis_report_csvs_ONLY"}

# Every directory of reference CSVs is one of the cases or known to lack its trace.
root = t.corpus(base)
references = {os.path.relpath(d, root) for d, _, files in os.walk(root)
              if any(f.endswith(".csv") for f in files)}
known = {c[2] for c in cases} | WITHOUT_TRACE
t.check(references == known, f"reference directories not covered: {sorted(references - known)}, "
        f"not found: {sorted(known - references)}")

failures = []
for trace, captures, reference, extra, not_compared in cases:
    reference_dir = t.corpus(base + reference)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "csv")
        args = [t.corpus(base + trace)]
        for capture in captures:
            args += ["--capture", t.corpus(base + capture)]
        t.sextant("trace", "report", *args, "--format", "tracelens", "--csv", out, "--xlsx",
                  os.path.join(d, "report.xlsx"))
        ours = {f[:-len(".csv")] for f in os.listdir(out)}
        theirs = {f[:-len(".csv")] for f in os.listdir(reference_dir) if f.endswith(".csv")}
        t.check(ours == theirs | extra, f"{trace}: tables {sorted(ours)}, TraceLens "
                f"{sorted(theirs)}, expected beside them {sorted(extra)}")
        timestamps = Timestamps.of_traces([t.corpus(base + p) for p in [trace] + captures])
        categories = {}
        if "ops_unique_args" in theirs:
            _, rows = read(os.path.join(reference_dir, "ops_unique_args.csv"))
            categories = {r["name"]: r["op category"] for r in rows}
        for name in sorted(theirs - not_compared):
            for problem in compare(os.path.join(out, name + ".csv"),
                                   os.path.join(reference_dir, name + ".csv"), name,
                                   timestamps, categories):
                failures.append(f"{trace} {name}: {problem}")
        with zipfile.ZipFile(os.path.join(d, "report.xlsx")) as z:
            workbook = z.read("xl/workbook.xml").decode()
            # Excel's sheet names hold 31 characters (kernel_launchers_summary_by_cat).
            for name in ours:
                if f'name="{name[:31]}"' not in workbook:
                    failures.append(f"{trace}: no sheet {name[:31]}")
t.check(not failures, f"{len(failures)} differences from TraceLens:\n" + "\n".join(failures[:40]))

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
