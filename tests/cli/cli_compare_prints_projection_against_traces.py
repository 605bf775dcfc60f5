#!/usr/bin/env python3
"""`projection performance --compare TRACE...` prints the projection of a run next to what the
run's own traces measured: on the eight modded-nanogpt H100 ranks, the measured iteration is
the mean over ranks of each rank's mean ProfilerStep (checked against the trace JSON; the note
gives the ranks' range), every rank is listed,
--json carries the same comparison, and a memory projection refuses the flag."""
import glob
import gzip
import json
import os
import re
import tempfile

import harness

t = harness.Test()
ranks = sorted(glob.glob(t.corpus("traces/llm_training/modded-nanogpt-8xh100") + "/rank*.json.gz"))
t.check(len(ranks) == 8, "the corpus should hold the eight modded-nanogpt ranks")

# Reference: each rank's mean ProfilerStep duration, straight from its JSON.
rank_ms = []
for path in ranks:
    events = json.load(gzip.open(path))["traceEvents"]
    steps = [e["dur"] for e in events
             if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    rank_ms.append(sum(steps) / len(steps) / 1000)
mean_ms = sum(rank_ms) / len(rank_ms)

# GPT of modded-nanogpt's profiled steps: 12 layers, 768 wide, 6 heads of 128, 4x MLP, 2048-token
# sequences, 8 per GPU (train_bs_schedule[0] = 8 x 2048 x 8 tokens over 8 GPUs).
model = ["--gpu-arch", "h100", "--num_layers", "12", "--hidden_size", "768",
         "--num_attention_heads", "6", "--num_query_groups", "6", "--ffn_hidden_size", "3072",
         "--swiglu", "false", "--seq_length", "2048", "--max_position_embeddings", "2048",
         "--vocab_size", "50304", "--micro-batch-size", "8", "--global-batch-size", "64"]
run = t.sextant("projection", "performance", *model, "--compare", *ranks)
row = re.search(r"iteration time +([\d.]+) +([\d.]+) +(-?[\d.]+)", run.output)
t.check(row is not None, "no iteration row in the comparison", run)
projected, measured, error = (float(x) for x in row.groups())
t.check(abs(measured - mean_ms) < 0.01,
        f"measured iteration {measured} ms, the traces say {mean_ms:.3f} ms", run)
t.expect_output(run, re.escape(f"{min(rank_ms):.2f} to {max(rank_ms):.2f} ms"))
t.check(abs((projected / measured - 1) * 100 - error) < 0.1, "the error column is not projected/measured - 1", run)
for name in ("compute", "exposed communication", "idle / pipeline bubble"):
    t.expect_output(run, re.escape(name) + r" +[\d.]+ +[\d.]+")
t.check(len(re.findall(r"^ +\d +4 +[\d.]+ +[\d.]+", run.output, re.M)) == 8,
        "the measured ranks table does not list the eight ranks", run)

t.check("warning" not in run.output, "the traced run's own model, GPU and size drew a warning", run)

j = t.json(t.sextant("projection", "performance", *model, "--compare", *ranks, "--json"))
t.check(len(j["compare"]["components"]) == 4 and len(j["compare"]["ranks"]) == 8,
        "the JSON comparison is incomplete")
t.check("warnings" not in j, "a matching comparison carries warnings")

# Another GPU, another model, another size: each said, not passed off as a validation.
run = t.sextant("projection", "performance", "--compare", *ranks)
t.expect_output(run, r"warning: --compare: .*rank0\.json\.gz was recorded on H100 \(NVIDIA H100 80GB "
                     r"HBM3\), not on the MI300X: the comparison is across GPUs")
t.expect_output(run, r"warning: --compare: the traces compute [\d.]+ ms per iteration, the "
                     r"projection [\d.]+ ms .*not of this model")
run = t.sextant("projection", "performance", *model[:-1], "512", "--target-nodes", "8",
                "--compare", *ranks)
t.expect_output(run, r"warning: --compare: the traced run had 8 GPUs .*the projection 64")
j = t.json(t.sextant("projection", "performance", "--compare", *ranks, "--json"))
t.check(any("recorded on H100" in w for w in j.get("warnings", [])),
        "the JSON does not carry the warnings")
run = t.sextant("projection", "performance", *model, "--compare", ranks[0], ranks[0],
                expect_status=1)
t.expect_output(run, r"rank0\.json\.gz: is given to --compare twice")
# The same file spelt another way is the same rank.
other_spelling = os.path.join(os.path.dirname(ranks[1]), "..", "modded-nanogpt-8xh100",
                              os.path.basename(ranks[1]))
run = t.sextant("projection", "performance", *model, "--compare", *ranks, other_spelling,
                expect_status=1)
t.expect_output(run, r"given to --compare again")
# Two outputs in one file: refused before anything is written.
with tempfile.TemporaryDirectory() as tmp:
    same = os.path.join(tmp, "out.json")
    run = t.sextant("projection", "performance", *model, "--profiling-mode", "trace", "--trace",
                    *ranks, "--save-benchmark", same, "--chrome-trace", same, expect_status=1)
    t.expect_output(run, r"--chrome-trace and --save-benchmark name one file")
    t.check(not os.path.exists(same), "a refused run wrote its output", run)
# Layer times and a comparison together: both tables.
run = t.sextant("projection", "performance", *model, "--profiling-mode", "both", "--trace",
                *ranks, "--compare", *ranks)
t.expect_output(run, r"Simulated vs measured layers")
t.expect_output(run, r"Projected vs measured, per iteration \(--compare\)")

run = t.sextant("projection", "memory", "--compare", ranks[0], expect_status=1)
t.expect_output(run, r"--compare, --scaling-nodes and --save-benchmark/--load-benchmark belong to the timed step")
t.passed()
