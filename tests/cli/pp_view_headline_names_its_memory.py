#!/usr/bin/env python3
"""`pp view`'s headline names the memory it gives: a dump Sextant simulated records only each
rank's peak activations (not what the GPU holds), so its headline must not call that number
"max memory"; it gives the largest `memory` of the dump's rank files."""
import json
import os
import re
import tempfile

import harness

t = harness.Test()
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
config = os.path.join(root, "examples", "llama3.1_8B-BF16-pretrain.yaml")
flags = ["--pipeline_model_parallel_size=4", "--num-virtual-stages-per-pipeline-rank", "2"]
with tempfile.TemporaryDirectory() as tmp:
    dump = os.path.join(tmp, "simulated")
    t.sextant("projection", "performance", "--config", config, *flags, "--pp-dump", dump)
    memory = []
    for rank in range(4):
        with open(os.path.join(dump, f"pp_rank_{rank}.json"), encoding="utf-8") as f:
            memory.append(json.load(f)["1"]["memory"])
    run = t.sextant("pp", "view", dump, "--html", os.path.join(tmp, "view.html"))
    headline = run.stdout.splitlines()[0]
    t.check(re.search(rf", peak activations {max(memory):.2f} GiB, ", headline) is not None,
            f"headline {headline!r} does not give the dump's peak activations {max(memory):.2f}",
            run)
    t.check("max memory" not in headline, "a simulated dump's activations called max memory", run)
    # The config itself: its projected memory per GPU, which is more than the activations.
    run = t.sextant("pp", "view", config, *flags, "--html", os.path.join(tmp, "config.html"))
    found = re.search(r"one step: [\d.]+ ms, projected memory per GPU ([\d.]+) GiB, ", run.stdout)
    t.check(found is not None, "the config's headline does not name its memory", run)
    t.check(float(found.group(1)) > max(memory), "projected memory is not above activations", run)
    peak = re.search(r"projected peak ([\d.]+) GiB of", run.stdout)
    t.check(peak is not None and peak.group(1) == found.group(1),
            "headline memory differs from the projected peak", run)
t.passed()
