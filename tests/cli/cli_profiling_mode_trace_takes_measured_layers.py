#!/usr/bin/env python3
"""`projection performance --profiling-mode trace` on DeepSeek's own DeepSeek-V3 training
trace (H800, EP64): every piece of the MoE layer (attn, mlp, dispatch, combine; F, B, W) is
the GPU time under its annotation ranges per layer, checked within 2% against a computation
straight from the trace's JSON; the measured layers replace the model's, the overlapped token
exchange is not charged, and a trace without layer ranges is refused by name."""
import json
import re
from collections import defaultdict

import harness

t = harness.Test()
trace = t.corpus("traces/llm_training/deepseek-v3-h800-ep64/train.json")
primus = t.corpus("primus")
config = primus + "/examples/megatron/configs/MI300X/deepseek_v3-FP8-pretrain.yaml"

# Reference: each GPU activity belongs to the annotation ranges open when it was launched (the
# ranges are the training loop's; backward launches come from autograd's thread meanwhile).
events = json.load(open(trace))["traceEvents"]
ranges = [e for e in events if e.get("cat") == "user_annotation"
          and re.fullmatch(r"\w+\([FBW]\)", e["name"])]
launch_ts = {e["args"]["correlation"]: e["ts"] for e in events
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
gpu_us = defaultdict(float)
count = defaultdict(int)
for r in ranges:
    count[r["name"]] += 1
for g in events:
    if g.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
        continue
    ts = launch_ts.get(g.get("args", {}).get("correlation"))
    if ts is None:
        continue
    for r in ranges:
        if r["ts"] <= ts < r["ts"] + r["dur"]:
            gpu_us[r["name"]] += g["dur"]

run = t.sextant("projection", "performance", "--config", config, "--primus-path", primus,
                "--gpu-arch", "h800", "--target-nodes", "256",
                "--pipeline_model_parallel_size", "16", "--expert_model_parallel_size", "64",
                "--pipeline-schedule-algorithm", "dualpipev", "--global-batch-size", "15360",
                "--micro-batch-size", "1", "--profiling-mode", "trace", "--trace", trace)
line = re.search(r"per piece, ms: ([^)]*)\)", run.output)
t.check(line is not None, "the projection does not list the measured pieces", run)
measured = {}
for piece in line.group(1).split("; "):
    name, f, b, w = re.fullmatch(r"(\w+) F ([\d.]+) B ([\d.]+) W ([\d.]+)", piece).groups()
    measured.update({f"{name}(F)": float(f), f"{name}(B)": float(b), f"{name}(W)": float(w)})
checked = 0
for name, total in gpu_us.items():
    reference_ms = total / count[name] / 1000
    ours = measured.get(name, 0.0)
    t.check(abs(ours - reference_ms) <= 0.02 * reference_ms + 0.001,
            f"{name}: {ours} ms per layer, the trace says {reference_ms:.3f}", run)
    checked += 1
t.check(checked == 10, f"expected the 10 piece ranges of the trace, found {checked}", run)
t.expect_output(run, r"the 58 moe layers take F [\d.]+ ms")
t.expect_output(run, r"\"1F1B\" range around the layers spans 32\.2\d\d ms per layer")
t.expect_output(run, r"EP communication +0\.00")
t.expect_output(run, r"modelled: dense layers, embedding, output head")

# Both: the model next to the measured layers, per piece, with the model's error.
run = t.sextant("projection", "performance", "--config", config, "--primus-path", primus,
                "--gpu-arch", "h800", "--target-nodes", "256",
                "--pipeline_model_parallel_size", "16", "--expert_model_parallel_size", "64",
                "--pipeline-schedule-algorithm", "dualpipev", "--global-batch-size", "15360",
                "--micro-batch-size", "1", "--profiling-mode", "both", "--trace", trace)
t.expect_output(run, r"Simulated vs measured layers \(--profiling-mode both\)")
forward = measured["attn(F)"] + measured["mlp(F)"]  # the hidden exchange is not charged
# Compute on both sides: the measured forward is attention and experts, its exchange hidden.
t.expect_output(run, r"moe layer F compute +ms +[\d.]+ +%s " % re.escape(f"{forward:.3f}"))
t.expect_output(run, r"moe layer EP communication, exposed +ms +[\d.]+ +0\.000")
# `projection both` prints the same side-by-side table after the memory report.
both = t.sextant("projection", "both", "--config", config, "--primus-path", primus,
                 "--gpu-arch", "h800", "--target-nodes", "256",
                 "--pipeline_model_parallel_size", "16", "--expert_model_parallel_size", "64",
                 "--pipeline-schedule-algorithm", "dualpipev", "--global-batch-size", "15360",
                 "--micro-batch-size", "1", "--profiling-mode", "both", "--trace", trace)
t.expect_output(both, r"moe layer F compute +ms +[\d.]+ +%s " % re.escape(f"{forward:.3f}"))
# The dense layers are modelled in both projections alike: no row compares them.
t.check("dense layer F" not in both.output, "a layer type both projections model is compared",
        both)
# H800 layer times are not an MI300X's: the job's GPU (the config's) is refused.
run = t.sextant("projection", "performance", "--config", config, "--primus-path", primus,
                "--profiling-mode", "trace", "--trace", trace, expect_status=1)
t.expect_output(run, r"train\.json: 'deviceProperties': was recorded on H800 \(NVIDIA H800\), "
                     r"not on the MI300X")

# A trace without per-layer ranges is measured per step; an inference trace has no backward
# to measure, and says so, naming the file.
plain = t.corpus("traces/TraceLens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
run = t.sextant("projection", "performance", "--profiling-mode", "trace", "--trace", plain,
                expect_status=1)
t.expect_output(run, r"Qwen_Qwen1\.5-0\.5B-Chat__1016005\.json\.gz.*no GPU work launched by autograd's backward")
run = t.sextant("projection", "performance", "--profiling-mode", "trace", expect_status=1)
t.expect_output(run, r"--trace FILE")
t.passed()
