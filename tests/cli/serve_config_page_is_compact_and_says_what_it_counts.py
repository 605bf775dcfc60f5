#!/usr/bin/env python3
"""A config's page under `serve`: its schedule data is embedded compactly (each rank's blocks and
transfers as columns, times to the microsecond), it names the simulated step as the console
does ("one step") and says that the iteration adds the optimizer step and exposed DP
communication to it, and its layout-search counts add up to the layouts enumerated. The index
marks a config that cannot be shown, with the reason, before its page is asked for.

The page's text is checked in headless Chromium (skipped without it)."""
import html
import json
import os
import re
import tempfile
import time
import urllib.request

import harness


def get(url):
    with urllib.request.urlopen(url, timeout=300) as r:
        return r.read()


def number(text):
    return float(text.replace(",", ""))


t = harness.Test()
config = os.path.abspath("examples/llama3.1_8B-BF16-pretrain.yaml")
# Four pipeline stages (the example reads $PRIMUS_PP): 32 micro-batches, 256 blocks to embed.
os.environ["PRIMUS_PP"] = "4"
unsupported = t.corpus("primus/examples/megatron/configs/MI355X/lfm2_8B_A1B-BF16-pretrain.yaml")
proc, url = t.start_server("serve", config, unsupported)
try:
    # The unsupported architecture is marked on the index without its page being asked for.
    deadline = time.time() + 60
    while True:
        views = json.loads(get(url + "api/index.json"))["views"]
        if views[1].get("failure") or time.time() > deadline:
            break
        time.sleep(0.2)
    t.check("unsupported architecture" in views[1].get("failure", ""),
            f"the index does not mark the LFM2 config: {views[1]}")
    t.check("failure" not in views[0], f"the Llama config is marked: {views[0]}")
    index = get(url).decode()
    t.check("1 cannot be shown" in index and
            re.search(r"cannot be shown: [^<]*unsupported architecture", html.unescape(index)),
            "the index page does not say which view cannot be shown, and why")
    page = get(url + "export/0.html").decode()
    data = json.loads(get(url + "api/0.json"))
finally:
    t.stop_server(proc)

# The embedded data: columns per rank, times with at most three decimals of a millisecond, as
# many blocks as the view's data holds.
embedded = json.loads(re.search(
    r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))
ranks = embedded["runs"][0]["iterations"][0]["ranks"]
full = data["runs"][0]["iterations"][0]["ranks"]
for rank, whole in zip(ranks, full):
    blocks = rank["blocks"]
    t.check(isinstance(blocks, dict) and sorted(blocks) == ["chunk", "end_ms", "mb", "op", "start_ms"],
            f"rank {rank['rank']}: blocks are not columns: {str(blocks)[:200]}")
    t.check(len(blocks["start_ms"]) == len(whole["blocks"]),
            f"rank {rank['rank']}: {len(blocks['start_ms'])} blocks on the page, "
            f"{len(whole['blocks'])} in the data")
    ops = [blocks["op"]["levels"][c] for c in blocks["op"]["codes"]]
    t.check(ops == [b["op"] for b in whole["blocks"]], f"rank {rank['rank']}: ops differ")
    for column in ("start_ms", "end_ms"):
        for v, b in zip(blocks[column], whole["blocks"]):
            t.check(abs(v - b[column]) <= 0.0005 and v == round(v, 3),
                    f"rank {rank['rank']}: {column} {v} for {b[column]}")
t.check(sum(len(r["blocks"]) for r in full) >= 256, "the config has fewer blocks than expected")
on_page, in_data = len(json.dumps(ranks)), len(json.dumps(full))
t.check(on_page < in_data / 2.5,
        f"the page's rank data ({on_page} bytes) is not much smaller than the view's ({in_data})")

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "config.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    dom, console = t.chromium(path)
t.check(not console, "the page logged to the console:\n" + "\n".join(console))
text = html.unescape(re.sub(r"<[^>]+>", " ", dom))
text = re.sub(r"\s+", " ", text)
title = re.search(r'<h2 class="panel-title">(.*?)</h2>', dom)
t.check(title is not None, "the page has no panel (its script stopped?)")
title = html.unescape(title.group(1))
step = re.search(r"one step ([\d,.]+) ms", title)
t.check(step is not None and "iteration time" not in title,
        f"the panel's title does not name the simulated step as the console does: {title}")
head = re.search(r"iteration ([\d,.]+) ms = one step ([\d,.]+) ms \(the timeline above\) \+ "
                 r"optimizer step and exposed DP communication ([\d,.]+) ms", text)
t.check(head is not None, "the projection does not say what the iteration adds to the step")
iteration, step_again, rest = (number(g) for g in head.groups())
t.check(step_again == number(step.group(1)) and abs(step_again + rest - iteration) <= 0.011,
        f"iteration {iteration} != step {step_again} + {rest}")
t.check(abs(iteration - data["projections"][0]["performance"]["iteration_time_ms"]) < 0.006,
        "the iteration is not `projection performance`'s")
counts = re.search(r"([\d,]+) of ([\d,]+) layouts fit \(([\d,]+) over HBM, ([\d,]+) not runnable, "
                   r"([\d,]+) pruned before being built", text)
t.check(counts is not None, "the search summary does not count the pruned layouts")
fit, total, over, invalid, pruned = (int(number(g)) for g in counts.groups())
t.check(fit + over + invalid + pruned == total,
        f"{fit} + {over} + {invalid} + {pruned} != {total} layouts")
t.passed()
