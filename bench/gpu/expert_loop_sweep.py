#!/usr/bin/env python3
"""Times MoE expert GEMMs the three ways training stacks run them, on the local GPU:

  grouped   one grouped-GEMM kernel over every local expert (torch._grouped_mm: what
            torchtitan runs, and what Primus Turbo's and MaxText's grouped GEMMs are);
  loop1     one GEMM per expert, one after the other on one stream (Megatron's
            SequentialMLP, moe_grouped_gemm off);
  loop4     one GEMM per expert, round-robin over 4 streams that join at the end
            (Transformer Engine's GroupedLinear: multi_stream_cublas_gemm with its 4 compute
            streams; the grouped_gemm package behind moe_use_legacy_grouped_gemm, NUM_STREAM 4).

The loops are captured in a CUDA graph and replayed, so the time is the GPU's, without the
Python loop's own launch cost (TE and grouped_gemm loop in C++). Shapes are the expert
GEMMs of real MoE configs (local experts = experts / EP, rows per expert = tokens x top-k x
EP / experts under balanced routing), forward (M, N, K) = (rows, out, in), and the
input-gradient (rows, in, out) and weight-gradient (in, out, rows) GEMMs.
Writes OUT_DIR/expert_loops.csv. Usage: python3 bench/gpu/expert_loop_sweep.py OUT_DIR
"""
import os
import sys

import torch

# CUDA-event medians, the grouped GEMM entry point, CSV with a header.
from kernel_sweep import grouped_mm, timed, write_rows

OUT = sys.argv[1] if len(sys.argv) > 1 else "sweep_out"
DEV = torch.device("cuda")
BF16 = torch.bfloat16
STREAMS = 4

# name, hidden, expert ffn, local experts, rows per expert
CASES = [
    ("dsv2_ep8_mbs1", 5120, 1536, 20, 1229),
    ("dsv2_ep8_mbs1_imbalanced_half", 5120, 1536, 20, 614),
    ("dsv2_lite_ep8_mbs2", 2048, 1408, 8, 6144),
    ("dsv2_lite_ep8_mbs1", 2048, 1408, 8, 3072),
    ("qwen3_30b_ep8_mbs1", 2048, 768, 16, 2048),
    ("qwen3_30b_ep8_mbs4", 2048, 768, 16, 8192),
    ("qwen3_30b_ep1_mbs1", 2048, 768, 128, 256),
    ("qwen3_30b_ep2_mbs1", 2048, 768, 64, 512),
    ("qwen3_30b_ep4_mbs1", 2048, 768, 32, 1024),
    ("gpt_oss_120b_ep8_mbs4", 2880, 2880, 16, 4096),
    ("gpt_oss_20b_ep1_mbs1", 2880, 2880, 32, 512),
    ("dsv3_ep8_mbs1", 7168, 2048, 32, 1024),
    ("dsv3_ep32_mbs1", 7168, 2048, 8, 4096),
    ("mixtral_8x7b_ep1_mbs1", 4096, 14336, 8, 1024),
    ("mixtral_8x7b_ep8_mbs1", 4096, 14336, 1, 8192),
    ("llama4_maverick_ep64_mbs1", 5120, 8192, 2, 2048),
    ("olmoe_ep1_mbs4", 2048, 1024, 64, 2048),
    ("deepseek_moe_16b_ep1_mbs1", 2048, 1408, 64, 384),
]


def graph_of(fn):
    """fn captured in a CUDA graph after a warm-up on a side stream."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g


def loop_fn(a_list, b_list, outs, streams):
    """Per-expert GEMMs round-robin over `streams` (None: the current stream only)."""
    def run():
        if streams is None:
            for a, b, o in zip(a_list, b_list, outs):
                torch.mm(a, b, out=o)
            return
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
        for i, (a, b, o) in enumerate(zip(a_list, b_list, outs)):
            with torch.cuda.stream(streams[i % len(streams)]):
                torch.mm(a, b, out=o)
        for s in streams:
            main.wait_stream(s)
    return run


def one_pass(experts, m, n, k, streams):
    """grouped / loop1 / loop4 milliseconds of `experts` GEMMs [m,k] x [k,n]."""
    a = torch.randn(experts * m, k, device=DEV, dtype=BF16)
    w = torch.randn(experts, k, n, device=DEV, dtype=BF16)
    offs = torch.arange(1, experts + 1, device=DEV, dtype=torch.int32) * m
    r = {}
    try:
        r["grouped"] = timed(lambda: grouped_mm(a, w, offs))
    except Exception as e:  # grouped_mm needs sm_90+ and aligned shapes
        print(f"    grouped_mm: {type(e).__name__}: {e}")
        r["grouped"] = float("nan")
    a_list = [a[e * m:(e + 1) * m] for e in range(experts)]
    b_list = [w[e] for e in range(experts)]
    outs = [torch.empty(m, n, device=DEV, dtype=BF16) for _ in range(experts)]
    g1 = graph_of(loop_fn(a_list, b_list, outs, None))
    r["loop1"] = timed(g1.replay)
    g4 = graph_of(loop_fn(a_list, b_list, outs, streams))
    r["loop4"] = timed(g4.replay)
    # One GEMM of the same rows as the reference for the efficiency of the shape itself.
    one = torch.empty(m, n, device=DEV, dtype=BF16)
    r["single"] = timed(lambda: torch.mm(a_list[0], b_list[0], out=one))
    del a, w, offs, a_list, b_list, outs, g1, g4
    torch.cuda.empty_cache()
    return r


def main():
    os.makedirs(OUT, exist_ok=True)
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]
    rows = []
    for name, hidden, ffn, experts, per in CASES:
        # fc1 (gate and up fused: 2 x ffn wide) and fc2, each forward, dgrad and wgrad.
        passes = [
            ("fc1_fwd", per, 2 * ffn, hidden), ("fc1_dgrad", per, hidden, 2 * ffn),
            ("fc1_wgrad", hidden, 2 * ffn, per),
            ("fc2_fwd", per, hidden, ffn), ("fc2_dgrad", per, ffn, hidden),
            ("fc2_wgrad", ffn, hidden, per),
        ]
        for pname, m, n, k in passes:
            try:
                r = one_pass(experts, m, n, k, streams)
            except Exception as e:
                print(f"  {name} {pname}: {type(e).__name__}: {e}", flush=True)
                continue
            flops = 2.0 * experts * m * n * k
            row = {"case": name, "pass": pname, "experts": experts, "m": m, "n": n, "k": k,
                   "grouped_ms": r["grouped"], "loop1_ms": r["loop1"], "loop4_ms": r["loop4"],
                   "single_ms": r["single"],
                   "grouped_tflops": flops / r["grouped"] / 1e9,
                   "loop1_tflops": flops / r["loop1"] / 1e9,
                   "loop4_tflops": flops / r["loop4"] / 1e9}
            rows.append(row)
            print("%-28s %-9s E%4d m%6d n%6d k%6d  grouped %.3f  loop1 %.3f  loop4 %.3f ms"
                  "  single %.4f  (%.0f / %.0f / %.0f TF/s)" % (
                      name, pname, experts, m, n, k, r["grouped"], r["loop1"], r["loop4"],
                      r["single"], row["grouped_tflops"], row["loop1_tflops"],
                      row["loop4_tflops"]), flush=True)
    write_rows(os.path.join(OUT, "expert_loops.csv"), rows, digits=5)


if __name__ == "__main__":
    main()
