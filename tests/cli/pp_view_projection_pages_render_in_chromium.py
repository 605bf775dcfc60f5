#!/usr/bin/env python3
"""`pp view --html` of an experiment config renders whole in a headless Chromium, without script
errors, also when the schedule cannot run at some node count of the scaling table: that row
gives the reason, as the console's table does, and the chart leaves the point out.

Needs Debian's chromium (`--dump-dom` returns the page after its scripts ran); without it the
test is skipped."""
import os
import re
import tempfile

import harness


def cells(dom, table_class):
    """The rows of the first <table class="...table_class..."> as lists of cell texts."""
    match = re.search(r'<table class="[^"]*\b' + table_class + r'\b[^"]*">(.*?)</table>', dom, re.S)
    if not match:
        return None
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", match.group(1), re.S)]


t = harness.Test()
config = t.corpus("primus/examples/megatron/configs/MI325X/llama3.1_70B-BF16-pretrain.yaml")
with tempfile.TemporaryDirectory() as tmp:
    html = os.path.join(tmp, "dualpipev.html")
    # global_batch_size 96, micro_batch_size 3: 32 micro-batches on 1 node (DP 1), 16 on 2,
    # 8 on 4. DualPipeV needs 2 x PP = 16, so 4 nodes cannot run it.
    run = t.sextant("pp", "view", config, "--use_torch_fsdp2=false",
                    "--pipeline_model_parallel_size=8", "--num-virtual-stages-per-pipeline-rank",
                    "2", "--pipeline-schedule-algorithm", "dualpipev", "--html", html)
    dom, console = t.chromium(html)
    t.check(not console, "the page logged to the console:\n" + "\n".join(console), run)
    rows = cells(dom, "scaling-table")
    t.check(rows is not None, "the page has no scaling table (its script stopped?)", run)
    t.check(rows[0][:3] == ["nodes", "DP", "micro-batches"] and rows[0][-1] == "note",
            f"scaling table header: {rows[0]}", run)
    by_nodes = {r[0]: r for r in rows[1:]}
    t.check(sorted(by_nodes) == ["1", "2", "4"], f"scaling rows: {rows}", run)
    t.check(by_nodes["1"][1:3] == ["1", "32"] and by_nodes["2"][1:3] == ["2", "16"],
            f"DP and micro-batches of 1 and 2 nodes: {rows}", run)
    t.check(re.search(r"needs at least 16 micro-batches.*got 8", by_nodes["4"][-1]) is not None,
            f"the 4-node row does not say why it cannot run: {by_nodes['4']}", run)
    t.check(by_nodes["4"][3] == "\u2014", f"the 4-node row shows a time: {by_nodes['4']}", run)
    # Two points (1 and 2 nodes) on the chart, none for the node count that cannot run.
    points = re.findall(r'<circle[^>]*class="scaling-point"[^>]*data-nodes="(\d+)"', dom)
    t.check(points == ["1", "2"], f"scaling chart points: {points}", run)
    t.check("NaN" not in dom, "the page draws NaN somewhere", run)
    # The tokens/s axis reads in round steps: 1, 2 or 5 times a power of ten, from 0.
    chart = re.search(r'<svg[^>]*class="scaling-chart".*?</svg>', dom, re.S)
    t.check(chart is not None, "no scaling chart", run)
    labels = [float(v.replace(",", "")) for v in re.findall(
        r'<text[^>]*text-anchor="end"[^>]*class="axis"[^>]*>([\d,.]+)</text>', chart.group(0))]
    steps = {round(b - a, 6) for a, b in zip(labels, labels[1:])}
    nice = len(steps) == 1 and next(iter(steps)) > 0 and any(
        abs(next(iter(steps)) / 10 ** e - m) < 1e-9 for e in range(-3, 10) for m in (1, 2, 5))
    t.check(len(labels) >= 3 and labels[0] == 0 and nice,
            f"scaling chart axis labels are not in round steps: {labels}", run)
    t.check(labels[-1] >= max(float(r[4].replace(",", "")) for r in rows[1:] if r[4] != "\u2014"),
            f"the axis ends below the highest point: {labels}, {rows}", run)
    # The projection section is followed by the notes, as on a page without such a row.
    t.check(re.search(r'class="projection".*id="notes-section"', dom, re.S) is not None,
            "the projection panels are not above the notes", run)
t.passed()
