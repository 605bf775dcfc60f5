#!/usr/bin/env python3
"""`projection search` prints its best configuration as Primus overrides that reproduce it:
the printed command line, handed to `projection performance`, gives the same tokens/s per GPU
as the search's first row. --csv-dir and --xlsx write the ranked list and the Pareto front."""
import csv
import os
import re
import tempfile
import zipfile

import harness

t = harness.Test()
with tempfile.TemporaryDirectory() as tmp:
    front = os.path.join(tmp, "front")
    book = os.path.join(tmp, "front.xlsx")
    run = t.sextant("projection", "search", "--target-nodes", "2", "--top", "3",
                    "--csv-dir", front, "--xlsx", book)
    best = re.search(r"^ *1 +(?:\S+ +){12}([\d.]+) ", run.output, re.M)
    t.check(best is not None, "no first row in the ranked list", run)
    line = re.search(r"command line: (.*)$", run.output, re.M)
    t.check(line is not None, "no Primus command line for the best configuration", run)
    t.expect_output(run, r"YAML, under modules\.pre_trainer\.overrides:\n    tensor_model_parallel_size: \d+")
    again = t.sextant("projection", "performance", "--target-nodes", "2", *line.group(1).split())
    tokens = re.search(r"tokens/s per GPU +([\d.]+)", again.output)
    t.check(tokens is not None and abs(float(tokens.group(1)) - float(best.group(1))) < 0.1,
            f"the overrides give {tokens and tokens.group(1)} tokens/s, the search {best.group(1)}",
            again)
    with open(os.path.join(front, "top.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    t.check(len(rows) == 3 and abs(float(rows[0]["tokens_per_s_per_gpu"]) - float(best.group(1))) < 0.1,
            "top.csv is not the ranked list", run)
    t.check(os.path.exists(os.path.join(front, "pareto.csv")), "no pareto.csv", run)
    with zipfile.ZipFile(book) as z:
        t.check(sum(n.startswith("xl/worksheets/sheet") for n in z.namelist()) == 2,
                "the workbook does not hold the two sheets", run)
    j = t.json(t.sextant("projection", "search", "--target-nodes", "2", "--top", "3", "--json"))
    t.check(j["best_as_primus_overrides"]["overrides"]["micro_batch_size"] == rows[0]["mbs"],
            "the JSON overrides are not the best configuration's")

# Pasted over an experiment that sets what the plan does not use (FSDP2 in the 70B file, a
# pipeline layout and VPP in DeepSeek-V3's), the command line still reproduces the search: it
# clears those keys instead of leaving them to clash with the plan.
primus = t.corpus("primus")
for config, nodes, search_only in [
        ("MI300X/llama3.1_70B-BF16-pretrain.yaml", "4",
         ["--pipeline-schedule-algorithm", "interleaved"]),
        ("MI355X/deepseek_v3-BF16-pretrain.yaml", "16", []),
        # MaxText's batch is per device and accumulation step: the overrides give the plan's
        # micro-batch and accumulation, not the whole step's batch per device.
        ("../../maxtext/configs/MI355X/llama3_8B-bf16-pretrain.yaml", "1", []),
        ("../../maxtext/configs/MI355X/mixtral_8x7B-bf16-pretrain.yaml", "2", [])]:
    path = os.path.normpath(os.path.join(primus, "examples", "megatron", "configs", config))
    j = t.json(t.sextant("projection", "search", "--config", path, "--primus-path", primus,
                         "--top", "1", "--target-nodes", nodes, *search_only, "--json"))
    args = []
    for key, value in j["best_as_primus_overrides"]["overrides"].items():
        args += ["--" + key, value]
    again = t.sextant("projection", "performance", "--config", path, "--primus-path", primus,
                      "--target-nodes", nodes, *args)
    tokens = re.search(r"tokens/s per GPU +([\d.]+)", again.output)
    searched = j["top"][0]["tokens_per_s_per_gpu"]
    t.check(tokens is not None and abs(float(tokens.group(1)) - searched) < 0.1,
            f"{config}: the overrides give {tokens and tokens.group(1)} tokens/s, the search "
            f"{searched:.2f}", again)
t.passed()
