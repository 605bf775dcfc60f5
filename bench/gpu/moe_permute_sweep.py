#!/usr/bin/env python3
"""Times the token permutation of MoE layers on the local GPU: what the unfused paths of
Megatron-Core (moe_permute_fusion off: index_select, then scatter_add_ back) and torchtitan
(x[idx] gather, scores multiply, scatter_add_) run around the expert GEMMs.

For each (tokens T, top-k, hidden H): gather of T*k rows, scatter_add_ of T*k rows into T rows
(atomic adds, k-way collisions), index_add_ (the backward of index_select), the
deterministic accumulate of x[idx]'s backward, and a plain copy of the same bytes.
Writes OUT_DIR/permute.csv. Usage: python3 bench/gpu/moe_permute_sweep.py OUT_DIR
"""
import os
import sys

import torch

from kernel_sweep import timed, write_rows  # CUDA-event medians; CSV with a header

OUT = sys.argv[1] if len(sys.argv) > 1 else "sweep_out"
DEV = torch.device("cuda")


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for dtype_name, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for tokens, topk, hidden in [
            (4096, 8, 2048), (16384, 8, 2048), (32768, 8, 2048), (4096, 6, 5120),
            (8192, 6, 2048), (4096, 8, 7168), (8192, 4, 2880), (8192, 2, 4096),
            (8192, 1, 5120), (16384, 2, 6144),
        ]:
            if dtype == torch.float32 and tokens * topk * hidden > (1 << 28):
                continue
            n = tokens * topk
            x = torch.randn(tokens, hidden, device=DEV, dtype=dtype)
            y = torch.randn(n, hidden, device=DEV, dtype=dtype)
            # Expert-sorted order of a balanced random routing: each token appears k times.
            idx = torch.randperm(n, device=DEV) // topk
            wide = idx.unsqueeze(1).expand(-1, hidden)
            out = torch.zeros(tokens, hidden, device=DEV, dtype=dtype)
            r = {"dtype": dtype_name, "tokens": tokens, "topk": topk, "hidden": hidden}
            r["gather_ms"] = timed(lambda: x.index_select(0, idx))
            r["scatter_add_ms"] = timed(lambda: out.zero_().scatter_add_(0, wide, y))
            r["index_add_ms"] = timed(lambda: out.zero_().index_add_(0, idx, y))
            r["index_put_accumulate_ms"] = timed(
                lambda: out.zero_().index_put_((idx,), y, accumulate=True))
            r["copy_ms"] = timed(lambda: y.clone())
            r["zero_ms"] = timed(lambda: out.zero_())
            bytes_rows = n * hidden * x.element_size()
            r["copy_gbps"] = 2 * bytes_rows / r["copy_ms"] / 1e6
            r["scatter_add_gelem_per_s"] = n * hidden / (r["scatter_add_ms"] - r["zero_ms"]) / 1e6
            r["index_add_gelem_per_s"] = n * hidden / (r["index_add_ms"] - r["zero_ms"]) / 1e6
            rows.append(r)
            print("%s T%6d k%d H%5d  gather %.3f  scatter_add %.3f  index_add %.3f  index_put %.3f"
                  "  copy %.3f ms (%.0f GB/s)  zero %.3f  -> scatter %.0f, index_add %.0f Gelem/s" % (
                      dtype_name, tokens, topk, hidden, r["gather_ms"], r["scatter_add_ms"],
                      r["index_add_ms"], r["index_put_accumulate_ms"], r["copy_ms"],
                      r["copy_gbps"], r["zero_ms"], r["scatter_add_gelem_per_s"],
                      r["index_add_gelem_per_s"]), flush=True)
            del x, y, idx, wide, out
            torch.cuda.empty_cache()
    write_rows(os.path.join(OUT, "permute.csv"), rows)


if __name__ == "__main__":
    main()
