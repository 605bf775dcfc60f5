#!/usr/bin/env python3
"""Times the kernels of LLM training on the local GPU, for `sextant calibrate` and for checking
Sextant's layer-time model against a real GPU.

Writes to OUT_DIR:
  kernels.json.gz   PyTorch profiler trace (record_shapes=True) of training-shaped GEMMs,
                    flash-attention forward/backward and memory-bound kernels: the input of
                    `sextant calibrate` (docs/calibrate.md).
  gemm_timings.csv  the same dense GEMMs timed with CUDA events (m,n,k,dtype,time_us,batch),
                    plus FP8 tensorwise GEMMs (torch._scaled_mm).
  grouped.csv       MoE expert GEMMs: one grouped GEMM (torch._grouped_mm) against the same
                    FLOPs as one dense GEMM, forward and backward.
  layers.csv        whole decoder layers (dense Llama-style and a top-k MoE block), forward and
                    forward+backward, median of timed iterations.
  attention.csv     flash / cuDNN attention forward and backward, timed with CUDA events.
  fp8_fast_accum.json.gz  profiler trace of the same FP8 GEMMs with fast accumulation
                    (use_fast_accum=True: what Transformer Engine and torchao run for the forward
                    GEMM; their input- and weight-gradient GEMMs keep the split accumulator).
  layer_*.json.gz   profiler traces of three training steps of a dense and a MoE layer.

Usage: python3 bench/gpu/kernel_sweep.py OUT_DIR [--quick] [--only fp8-fast-accum]
Every section runs on its own: one that fails (an op missing in this PyTorch) is reported
and the others still run.
"""
import csv
import gzip
import os
import shutil
import statistics
import sys
import traceback

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "sweep_out"
QUICK = "--quick" in sys.argv
DEV = torch.device("cuda")
BF16 = torch.bfloat16
REPS = 5 if QUICK else 10


def timed(fn, reps=REPS, warmup=3):
    """Median milliseconds of fn() over reps runs, each between two CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def section(name, fn):
    print(f"== {name}", flush=True)
    try:
        fn()
    except Exception:  # a missing op must not cost the other sections
        traceback.print_exc()
        print(f"!! {name} failed", flush=True)


# Dense GEMMs of training: tokens (M) x the projections of Llama 3 8B/70B, Qwen3-30B-A3B's
# attention and Mixtral 8x22B at TP 1/2/4/8 (N or K split), forward shapes (M, N, K).
def dense_shapes():
    models = {  # hidden, query width (heads x head dim), key/value width, ffn
        "llama3_8b": (4096, 4096, 1024, 14336),
        "llama3_70b": (8192, 8192, 1024, 28672),
        "qwen3_30b_attn": (2048, 4096, 512, 0),
        "mixtral_8x22b": (6144, 6144, 1024, 16384),
    }
    shapes = set()
    for tokens in (4096, 8192, 16384) if not QUICK else (4096,):
        for hidden, q, kv, ffn in models.values():
            for tp in (1, 2, 4, 8):
                shapes.add((tokens, (q + 2 * kv) // tp, hidden))  # QKV
                shapes.add((tokens, hidden, q // tp))  # attention output
                if ffn:
                    shapes.add((tokens, 2 * ffn // tp, hidden))  # gate+up
                    shapes.add((tokens, hidden, ffn // tp))  # down
    return sorted(shapes)


def gemm_sweep(profile_ops):
    rows = []
    for m, n, k in dense_shapes():
        a = torch.randn(m, k, device=DEV, dtype=BF16)
        b = torch.randn(k, n, device=DEV, dtype=BF16)
        ms = timed(lambda: torch.mm(a, b))
        rows.append((m, n, k, "bf16", ms * 1000.0, 1))
        profile_ops.append(("mm", lambda a=a, b=b: torch.mm(a, b)))
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if fp8 is not None and hasattr(torch, "_scaled_mm"):
        one = torch.ones((), device=DEV, dtype=torch.float32)
        for m, n, k in dense_shapes():
            if k % 16 or n % 16:
                continue
            a = torch.randn(m, k, device=DEV, dtype=BF16).to(fp8)
            b = torch.randn(n, k, device=DEV, dtype=BF16).to(fp8).t()  # column-major
            def scaled(a=a, b=b):
                return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=BF16)

            ms = timed(scaled)
            rows.append((m, n, k, "fp8", ms * 1000.0, 1))
            profile_ops.append(("scaled_mm", scaled))
    with open(os.path.join(OUT, "gemm_timings.csv"), "w", newline="") as f:
        f.write("# dense GEMMs timed with CUDA events on " + torch.cuda.get_device_name() + "\n")
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "dtype", "time_us", "batch"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], r[3], f"{r[4]:.3f}", r[5]])
    print(f"{len(rows)} GEMMs timed")


def fp8_fast_accum_sweep():
    fp8 = torch.float8_e4m3fn
    one = torch.ones((), device=DEV, dtype=torch.float32)
    ops = []
    for m, n, k in dense_shapes():
        a = torch.randn(m, k, device=DEV, dtype=BF16).to(fp8)
        b = torch.randn(n, k, device=DEV, dtype=BF16).to(fp8).t()

        def fast(a=a, b=b):
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=BF16,
                                    use_fast_accum=True)

        ops.append(("scaled_mm_fast_accum", fast))
    profile_ops_to_trace(ops, os.path.join(OUT, "fp8_fast_accum.json.gz"))


def attention_call(backend, q, k, v, gqa):
    from torch.nn.attention import sdpa_kernel

    def fwd():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

    return fwd


def attention_sweep(profile_ops):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    configs = [  # batch, heads, kv heads, seq, head dim
        (1, 32, 8, 4096, 128), (2, 32, 8, 4096, 128), (1, 32, 8, 8192, 128),
        (1, 64, 8, 4096, 128), (1, 8, 8, 4096, 128), (1, 32, 4, 4096, 128),
        (4, 16, 16, 2048, 128), (1, 16, 16, 16384, 128),
    ]
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    for name, backend in backends:
        for b, h, hkv, s, d in configs:
            q = torch.randn(b, h, s, d, device=DEV, dtype=BF16, requires_grad=True)
            kk = torch.randn(b, hkv, s, d, device=DEV, dtype=BF16, requires_grad=True)
            v = torch.randn(b, hkv, s, d, device=DEV, dtype=BF16, requires_grad=True)
            fwd = attention_call(backend, q, kk, v, h != hkv)
            gqa = h != hkv
            try:
                out = fwd()
            except Exception as e:  # this backend does not take this shape
                print(f"  {name} {b}x{h}/{hkv}x{s}x{d}: {type(e).__name__}")
                continue
            grad = torch.randn_like(out)
            f_ms = timed(fwd)

            def fwd_bwd(fwd=fwd, grad=grad):
                fwd().backward(grad)

            fb_ms = timed(fwd_bwd)
            flops = 4 * b * h * s * s * d / 2  # causal: half of QK^T and PV
            rows.append((name, b, h, hkv, s, d, f_ms, fb_ms - f_ms,
                         flops / f_ms / 1e9, 2.5 * flops / (fb_ms - f_ms) / 1e9))
            if name == "flash" or not gqa:
                profile_ops.append((f"sdpa_{name}", fwd_bwd))
    with open(os.path.join(OUT, "attention.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "batch", "heads", "kv_heads", "seq", "head_dim", "fwd_ms",
                    "bwd_ms", "fwd_tflops", "bwd_tflops"])
        for r in rows:
            w.writerow(list(r[:6]) + [f"{x:.4f}" for x in r[6:]])
    for r in rows:
        print("  %-6s b%d h%d/%d s%d d%d  fwd %.3f ms (%.0f TF/s)  bwd %.3f ms (%.0f TF/s)" %
              (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[8], r[7], r[9]))


def memory_sweep(profile_ops):
    for numel in (1 << 20, 1 << 23, 1 << 25, 1 << 27):
        x = torch.randn(numel, device=DEV, dtype=BF16)
        y = torch.randn(numel, device=DEV, dtype=BF16)
        w = torch.randn(4096, device=DEV, dtype=BF16)
        profile_ops.append(("add", lambda x=x, y=y: torch.add(x, y)))
        profile_ops.append(("mul", lambda x=x, y=y: torch.mul(x, y)))
        profile_ops.append(("silu", lambda x=x: F.silu(x)))
        x2 = x.view(-1, 4096)
        profile_ops.append(("rms_norm", lambda x2=x2, w=w: F.rms_norm(x2, (4096,), w)))
        profile_ops.append(("copy", lambda x=x, y=y: y.copy_(x)))


# Grouped expert GEMMs of MoE models: (name, hidden, expert ffn, local experts, tokens per
# expert). Tokens per expert = tokens on the GPU x top-k / experts (balanced routing).
GROUPED = [
    ("qwen3_30b_a3b_ep8_mbs8", 2048, 768, 16, 16384),
    ("qwen3_30b_a3b_ep8_mbs1", 2048, 768, 16, 2048),
    ("qwen3_30b_a3b_ep1_mbs1", 2048, 768, 128, 256),
    ("dsv2_lite_ep8_mbs4", 2048, 1408, 8, 6144),
    ("dsv2_ep8_mbs1", 5120, 1536, 20, 1229),
    ("gpt_oss_120b_ep8_mbs1", 2880, 2880, 16, 1024),
    ("mixtral_8x22b_ep8_mbs1", 6144, 16384, 1, 8192),
    ("dsv3_ep8_mbs1", 7168, 2048, 32, 1024),
    ("dsv3_ep32_mbs1", 7168, 2048, 8, 1024),
]


def grouped_mm(a, b, offs):
    if hasattr(F, "grouped_mm"):
        return F.grouped_mm(a, b, offs=offs)
    return torch._grouped_mm(a, b, offs=offs)


def grouped_sweep(_):
    rows = []
    for spec in GROUPED:
        try:
            rows.append(grouped_one(*spec))
        except Exception as e:
            print(f"  {spec[0]}: {type(e).__name__}: {e}")
        torch.cuda.empty_cache()
    write_rows(os.path.join(OUT, "grouped.csv"), rows)


def write_rows(path, rows, digits=4):
    """rows (dicts with the same keys) as a CSV with a header; floats to `digits` places."""
    if not rows:
        return
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.{digits}f}" if isinstance(v, float) else v)
                        for k, v in r.items()})


def grouped_one(name, hidden, ffn, experts, per):
    total = experts * per
    offs = torch.arange(1, experts + 1, device=DEV, dtype=torch.int32) * per
    x = torch.randn(total, hidden, device=DEV, dtype=BF16, requires_grad=True)
    w1 = torch.randn(experts, hidden, 2 * ffn, device=DEV, dtype=BF16, requires_grad=True)
    w2 = torch.randn(experts, ffn, hidden, device=DEV, dtype=BF16, requires_grad=True)
    h = torch.randn(total, ffn, device=DEV, dtype=BF16, requires_grad=True)
    entry = {"name": name, "hidden": hidden, "ffn": ffn, "experts": experts,
             "tokens_per_expert": per}
    entry["up_fwd_ms"] = timed(lambda: grouped_mm(x, w1, offs))
    entry["down_fwd_ms"] = timed(lambda: grouped_mm(h, w2, offs))
    g1 = torch.randn(total, 2 * ffn, device=DEV, dtype=BF16)
    g2 = torch.randn(total, hidden, device=DEV, dtype=BF16)

    def up_fb():
        grouped_mm(x, w1, offs).backward(g1)

    def down_fb():
        grouped_mm(h, w2, offs).backward(g2)

    entry["up_bwd_ms"] = timed(up_fb) - entry["up_fwd_ms"]
    entry["down_bwd_ms"] = timed(down_fb) - entry["down_fwd_ms"]
    # The same FLOPs as one dense GEMM, and as a loop of per-expert GEMMs.
    a = torch.randn(total, hidden, device=DEV, dtype=BF16)
    b = torch.randn(hidden, 2 * ffn, device=DEV, dtype=BF16)
    entry["up_dense_ms"] = timed(lambda: torch.mm(a, b))
    wl = w1.detach()

    def loop():
        for e in range(experts):
            torch.mm(a[e * per:(e + 1) * per], wl[e])

    entry["up_loop_ms"] = timed(loop)
    flops = 2 * total * hidden * 2 * ffn
    entry["up_fwd_tflops"] = flops / entry["up_fwd_ms"] / 1e9
    entry["up_dense_tflops"] = flops / entry["up_dense_ms"] / 1e9
    print("  %-26s up %.3f ms (%.0f TF/s; dense %.0f, loop %.3f ms)  down %.3f  up bwd %.3f"
          "  down bwd %.3f" % (name, entry["up_fwd_ms"], entry["up_fwd_tflops"],
                               entry["up_dense_tflops"], entry["up_loop_ms"],
                               entry["down_fwd_ms"], entry["up_bwd_ms"], entry["down_bwd_ms"]))
    return entry


class RMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight)


def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Attention(torch.nn.Module):
    def __init__(self, hidden, heads, kv_heads, head_dim):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.norm = RMSNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=False)
        self.out = torch.nn.Linear(heads * head_dim, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim,
             self.kv_heads * self.head_dim], dim=-1)
        q = rope(q.view(b, s, self.heads, self.head_dim).transpose(1, 2), cos, sin)
        k = rope(k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2), cos, sin)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=self.heads != self.kv_heads)
        return x + self.out(a.transpose(1, 2).reshape(b, s, -1))


class DenseMlp(torch.nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.norm = RMSNorm(hidden)
        self.gate_up = torch.nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        g, u = self.gate_up(self.norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class MoeMlp(torch.nn.Module):
    """Top-k routed experts on one GPU (expert parallel 1): router, sort by expert, two grouped
    GEMMs, weighted accumulation back. style "index": rows gathered by indexing, accumulated
    with index_add_; "megatron": Megatron-Core's unfused index_select and scatter_add_."""

    def __init__(self, hidden, ffn, experts, topk, style="index"):
        super().__init__()
        self.experts, self.topk, self.style = experts, topk, style
        self.norm = RMSNorm(hidden)
        self.router = torch.nn.Linear(hidden, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(experts, hidden, 2 * ffn) * 0.02)
        self.w2 = torch.nn.Parameter(torch.randn(experts, ffn, hidden) * 0.02)

    def forward(self, x):
        shape = x.shape
        t = self.norm(x).reshape(-1, shape[-1])
        scores = torch.softmax(self.router(t).float(), dim=-1)
        weights, experts = torch.topk(scores, self.topk, dim=-1)
        flat = experts.reshape(-1)
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=self.experts)
        offs = torch.cumsum(counts, 0).to(torch.int32)
        source = order // self.topk
        if self.style == "megatron":
            # Megatron-Core's unfused permute/unpermute (moe_utils.permute / unpermute):
            # index_select, then probs multiply and scatter_add_ back.
            routed = t.index_select(0, source)
        else:
            routed = t[source]
        g, u = grouped_mm(routed, self.w1, offs).chunk(2, dim=-1)
        y = grouped_mm(F.silu(g) * u, self.w2, offs)
        y = y * weights.reshape(-1)[order].unsqueeze(-1).to(y.dtype)
        if self.style == "megatron":
            wide = source.unsqueeze(1).expand(-1, y.shape[-1])
            out = torch.zeros_like(t).scatter_add_(0, wide, y)
        else:
            out = torch.zeros_like(t).index_add_(0, source, y)
        return x + out.view(shape)


class Layer(torch.nn.Module):
    def __init__(self, attn, mlp):
        super().__init__()
        self.attn, self.mlp = attn, mlp

    def forward(self, x, cos, sin):
        return self.mlp(self.attn(x, cos, sin))


LAYERS = [  # name, hidden, heads, kv heads, head dim, mlp, micro-batch, seq
    ("llama3_8b", 4096, 32, 8, 128, ("dense", 14336), 1, 4096),
    ("llama3_8b", 4096, 32, 8, 128, ("dense", 14336), 2, 4096),
    ("llama3_70b_tp8_shapes", 8192, 8, 1, 128, ("dense", 3584), 1, 4096),
    ("qwen3_30b_a3b_ep1", 2048, 32, 4, 128, ("moe", 768, 128, 8), 1, 4096),
    ("qwen3_30b_a3b_ep1", 2048, 32, 4, 128, ("moe", 768, 128, 8), 4, 4096),
    ("qwen3_30b_a3b_ep1_megatron", 2048, 32, 4, 128, ("moe", 768, 128, 8, "megatron"), 1, 4096),
    ("qwen3_30b_a3b_ep1_megatron", 2048, 32, 4, 128, ("moe", 768, 128, 8, "megatron"), 4, 4096),
    ("mixtral_8x7b_ep1", 4096, 32, 8, 128, ("moe", 14336, 8, 2), 1, 4096),
]


def layer_sweep(_):
    rows = []
    for name, hidden, heads, kv, hd, mlp, mbs, seq in LAYERS:
        torch.manual_seed(0)
        attn = Attention(hidden, heads, kv, hd)
        ffn = DenseMlp(hidden, mlp[1]) if mlp[0] == "dense" else MoeMlp(hidden, *mlp[1:])
        layer = Layer(attn, ffn).to(DEV, BF16)
        x = torch.randn(mbs, seq, hidden, device=DEV, dtype=BF16, requires_grad=True)
        pos = torch.arange(seq, device=DEV, dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=DEV).float() / hd))
        ang = torch.outer(pos, inv)
        cos = torch.cat((ang, ang), -1).cos().to(BF16)
        sin = torch.cat((ang, ang), -1).sin().to(BF16)
        grad = torch.randn_like(x)
        fwd_ms = timed(lambda: layer(x, cos, sin))

        def step():
            layer(x, cos, sin).backward(grad)

        step_ms = timed(step)
        attn_fwd = timed(lambda: attn(x, cos, sin))
        rows.append((name, mbs, seq, fwd_ms, step_ms - fwd_ms, attn_fwd, fwd_ms - attn_fwd))
        print("  %-24s mbs %d seq %d  fwd %.3f ms  bwd %.3f ms  (attention block fwd %.3f, mlp"
              " block fwd %.3f)" % rows[-1])
        if mbs == 1 and name in ("llama3_8b", "qwen3_30b_a3b_ep1_megatron"):
            profile_ops_to_trace([(name, step)], os.path.join(OUT, f"layer_{name}.json.gz"))
        del layer, x, grad
        torch.cuda.empty_cache()
    with open(os.path.join(OUT, "layers.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["layer", "micro_batch", "seq", "fwd_ms", "bwd_ms", "attention_block_fwd_ms",
                    "mlp_block_fwd_ms"])
        for r in rows:
            w.writerow(list(r[:3]) + [f"{v:.4f}" for v in r[3:]])


def profile_ops_to_trace(ops, path, reps=3):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        for _, fn in ops:
            for _ in range(reps):
                fn()
        torch.cuda.synchronize()
    raw = path[:-3]
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


def main():
    os.makedirs(OUT, exist_ok=True)
    p = torch.cuda.get_device_properties(0)
    print(f"{torch.cuda.get_device_name()} sm_{p.major}{p.minor} {p.multi_processor_count} SMs, "
          f"{p.total_memory / 2**30:.1f} GiB; torch {torch.__version__} cuda {torch.version.cuda} "
          f"cudnn {torch.backends.cudnn.version()}", flush=True)
    if "fp8-fast-accum" in sys.argv:
        section("FP8 GEMMs with fast accumulation", fp8_fast_accum_sweep)
        return
    ops = []
    section("dense GEMMs", lambda: gemm_sweep(ops))
    section("attention", lambda: attention_sweep(ops))
    section("memory-bound", lambda: memory_sweep(ops))
    section("kernel trace", lambda: profile_ops_to_trace(ops, os.path.join(OUT, "kernels.json.gz")))
    ops.clear()
    section("grouped GEMMs", lambda: grouped_sweep(None))
    section("layers", lambda: layer_sweep(None))


if __name__ == "__main__":
    main()
