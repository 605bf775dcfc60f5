#!/usr/bin/env python3
"""`projection performance --profiling-mode trace` on traces without per-layer ranges — the
eight torch.compile'd modded-nanogpt H100 ranks — measures each rank's steps by phase and
anchors the projection on them: the forward / backward split of the GPU computation matches a
computation straight from the traces' JSON within 1%, the projection back onto the same 8 GPUs
is within 5% of the measured step (the mean ProfilerStep over the ranks), the scaling table
carries it to 64 GPUs with more data-parallel communication, and a trace of another model is
refused."""
import bisect
import glob
import gzip
import json
import os
import re
import tempfile
from collections import defaultdict

import harness

t = harness.Test()
ranks = sorted(glob.glob(t.corpus("traces/llm_training/modded-nanogpt-8xh100") + "/rank*.json.gz"))
t.check(len(ranks) == 8, "the corpus should hold the eight modded-nanogpt ranks")

# Reference, from the JSON: each GPU kernel (collectives aside) belongs to the backward when its
# launch lies inside an "autograd::engine::evaluate_function" op of the launching thread, to the
# optimizer inside an "Optimizer.step#" range, else to the forward.
step_ms = []
phase_us = defaultdict(float)
for path in ranks:
    events = json.load(gzip.open(path))["traceEvents"]
    steps = [e["dur"] for e in events
             if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    step_ms.append(sum(steps) / len(steps) / 1000)
    spans = defaultdict(list)  # tid -> (start, end, phase)
    for e in events:
        name = e.get("name", "")
        if e.get("ph") != "X":
            continue
        if name.startswith("autograd::engine::evaluate_function"):
            spans[e["tid"]].append((e["ts"], e["ts"] + e["dur"], "backward"))
        elif name.startswith("Optimizer.step#") or name.startswith("Optimizer.zero_grad#"):
            spans[e["tid"]].append((e["ts"], e["ts"] + e["dur"], "optimizer"))
    launches = {e["args"]["correlation"]: (e["tid"], e["ts"]) for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "correlation" in e.get("args", {})}
    for e in events:
        if e.get("cat") != "kernel" or e["name"].startswith("nccl"):
            continue
        launch = launches.get(e.get("args", {}).get("correlation"))
        if launch is None:
            continue
        tid, ts = launch
        phase = "forward"
        for start, end, p in spans[tid]:
            if start <= ts < end:
                phase = p
        phase_us[phase] += e["dur"]
measured_step_ms = sum(step_ms) / len(step_ms)
reference_ratio = phase_us["backward"] / phase_us["forward"]

# GPT of modded-nanogpt's profiled steps: 12 layers, 768 wide, 6 heads of 128, 4x MLP, 2048-token
# sequences, 8 per GPU.
model = ["--gpu-arch", "h100", "--num_layers", "12", "--hidden_size", "768",
         "--num_attention_heads", "6", "--num_query_groups", "6", "--ffn_hidden_size", "3072",
         "--swiglu", "false", "--seq_length", "2048", "--max_position_embeddings", "2048",
         "--vocab_size", "50304", "--micro-batch-size", "8", "--global-batch-size", "64"]
run = t.sextant("projection", "performance", *model, "--profiling-mode", "trace",
                "--trace", *ranks, "--scaling-nodes", "1,8")
line = re.search(r"8 rank trace\(s\) of 8 GPUs, 4 iteration\(s\) each, 1 micro-batch\(es\) per "
                 r"iteration; per iteration: forward ([\d.]+) ms, backward ([\d.]+) ms", run.output)
t.check(line is not None, "the projection does not say what it measured", run)
forward, backward = float(line.group(1)), float(line.group(2))
t.check(abs(backward / forward / reference_ratio - 1) < 0.01,
        f"backward/forward {backward / forward:.3f}, the traces say {reference_ratio:.3f}", run)
iteration = float(re.search(r"iteration time +([\d.]+) +ms", run.output).group(1))
t.check(abs(iteration / measured_step_ms - 1) < 0.05,
        f"projected {iteration} ms on the traced 8 GPUs, measured {measured_step_ms:.2f} ms", run)
t.expect_output(run, r"idle \(measured in the traces\) +[\d.]+")
one = re.search(r"^ +1 +8 +1 +([\d.]+)", run.output, re.M)
eight = re.search(r"^ +8 +64 +1 +([\d.]+)", run.output, re.M)
t.check(one is not None and eight is not None, "the scaling table lacks 8 or 64 GPUs", run)
t.check(float(eight.group(1)) > float(one.group(1)),
        "64 GPUs should pay more data-parallel communication than 8", run)

t.check("warning" not in run.output, "the traced model itself drew a warning", run)

# --save-benchmark keeps what the traces measured; --load-benchmark projects the same without
# reading them again, and refuses another GPU.
with tempfile.TemporaryDirectory() as tmp:
    kept = os.path.join(tmp, "nanogpt.json")
    run = t.sextant("projection", "performance", *model, "--profiling-mode", "trace", "--trace",
                    *ranks, "--save-benchmark", kept)
    saved = float(re.search(r"iteration time +([\d.]+) +ms", run.output).group(1))
    artifact = json.load(open(kept))
    t.check(artifact["format"] == "sextant-benchmark" and artifact["step"]["ranks"] == 8,
            "the artifact does not hold the 8 ranks' step")
    t.check(abs(artifact["step"]["step_ms"] - measured_step_ms) < 0.01,
            f"the artifact's step {artifact['step']['step_ms']} ms, the traces' {measured_step_ms:.3f}")
    run = t.sextant("projection", "performance", *model, "--profiling-mode", "trace",
                    "--load-benchmark", kept)
    loaded = float(re.search(r"iteration time +([\d.]+) +ms", run.output).group(1))
    t.check(loaded == saved, f"loaded {loaded} ms, measured {saved} ms", run)
    run = t.sextant("projection", "performance", *model[2:], "--profiling-mode", "trace",
                    "--load-benchmark", kept, expect_status=1)
    t.expect_output(run, r"was recorded on H100 \(NVIDIA H100 80GB HBM3\), not on the MI300X: project the traced GPU")
    run = t.sextant("projection", "performance", *model, "--load-benchmark", kept,
                    expect_status=1)
    t.expect_output(run, r"--load-benchmark FILE stands for --trace FILE")
# Three times the layers: the traces' computation is under a third of the model's, accepted
# (within a fifth) but said, since every layer is scaled by it.
deeper = list(model)
deeper[deeper.index("--num_layers") + 1] = "36"
run = t.sextant("projection", "performance", *deeper, "--profiling-mode", "trace", "--trace", *ranks)
t.expect_output(run, r"warning: --profiling-mode trace: the traces' forward computation is "
                     r"0\.2\d\dx what the model gives this job")

# Projected straight onto 64 GPUs (8 nodes, 8 sequences per GPU as traced): what the scaling
# table gave.
at64 = model[:-1] + ["512"]  # --global-batch-size 512
run = t.sextant("projection", "performance", *at64, "--target-nodes", "8", "--profiling-mode",
                "trace", "--trace", *ranks)
direct = float(re.search(r"iteration time +([\d.]+) +ms", run.output).group(1))
t.check(abs(direct - float(eight.group(1))) < 0.1,
        f"64 GPUs projected directly {direct} ms, in the scaling table {eight.group(1)}", run)

# Traces of another step are refused: another micro-batch on the traced GPUs, another GPU.
other = list(model)
other[other.index("--micro-batch-size") + 1] = "4"
run = t.sextant("projection", "performance", *other, "--profiling-mode", "trace", "--trace",
                *ranks, expect_status=1)
t.expect_output(run, r"the traces ran 1 micro-batch\(es\) per iteration on 8 GPUs, the job would run 2")
run = t.sextant("projection", "performance", *model[2:], "--profiling-mode", "trace", "--trace",
                *ranks, expect_status=1)
t.expect_output(run, r"was recorded on H100 \(NVIDIA H100 80GB HBM3\), not on the MI300X: project the traced GPU")

# A trace of another model (a ResNet) is refused rather than scaled onto Llama 3.1 8B.
resnet = t.corpus("traces/TraceLens/mi300/resnet_act_checkpoint.json.gz")
run = t.sextant("projection", "performance", "--global-batch-size", "16", "--profiling-mode",
                "trace", "--trace", resnet, expect_status=1)
t.expect_output(run, r"not of this model.*resnet_act_checkpoint\.json\.gz")
t.passed()
