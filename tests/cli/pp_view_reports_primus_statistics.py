#!/usr/bin/env python3
"""`pp view` on the corpus's Primus dumps prints the iteration time and per-rank bubble that
Primus's own viewer prints for them (research/primus-observability.md section 2.4), writes a
self-contained HTML view, and never writes over the dump it reads."""
import os
import re
import tempfile

import harness

t = harness.Test()
dump = t.corpus("pp_dumps/gpu8_layer64_gbs16/pp8_vpp2")
with tempfile.TemporaryDirectory() as tmp:
    html = os.path.join(tmp, "view.html")
    run = t.sextant("pp", "view", dump, "--iteration", "7", "--html", html)
    t.expect_output(run, r"pp8_vpp2 \(measured\): iteration 7: 2880\.70 ms, max memory 130\.60 GiB")
    # Primus's per-rank bubble for this iteration, PP-0 .. PP-7.
    bubbles = [26.14, 28.44, 27.82, 30.95, 30.21, 29.39, 30.42, 17.30]
    for rank, bubble in enumerate(bubbles):
        t.expect_output(run, rf"PP-{rank} +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +{bubble:.2f} ")
    t.expect_output(run, r"vs pp8_vpp2 \(ideal\)")
    with open(html, encoding="utf-8") as f:
        page = f.read()
    t.check(page.startswith("<!DOCTYPE html>") and 'id="data"' in page,
            "the HTML view is not a page with its data", run)
    # (SVG's namespace URI is a name, not a fetch.)
    t.check(not re.search(r"<script[^>]+src=|<link[^>]+href=|https?://(?!www\.w3\.org/)[a-z]", page),
            "the HTML view fetches something from elsewhere (it must be self-contained)")

    # Every file of the dump is an input: writing the view over one is refused, the file is
    # left as it was.
    target = os.path.join(tmp, "copy")
    os.makedirs(target)
    for name in os.listdir(dump):
        with open(os.path.join(dump, name), "rb") as src, open(os.path.join(target, name), "wb") as dst:
            dst.write(src.read())
    victim = os.path.join(target, "pp_rank_3.json")
    before = open(victim, "rb").read()
    run = t.sextant("pp", "view", target, "--html", victim, expect_status=1)
    t.expect_output(run, r"pp_rank_3\.json.*(input|same file)")
    t.check(open(victim, "rb").read() == before, "the dump file was changed", run)

# Two runs whose directories have the same name are named by their parents, on the console and
# in the page's data.
with tempfile.TemporaryDirectory() as tmp:
    for run_dir in ("before", "after"):
        os.makedirs(os.path.join(tmp, run_dir, "pp8_vpp2"))
        for name in os.listdir(dump):
            with open(os.path.join(dump, name), "rb") as src, \
                    open(os.path.join(tmp, run_dir, "pp8_vpp2", name), "wb") as dst:
                dst.write(src.read())
    run = t.sextant("pp", "view", os.path.join(tmp, "before", "pp8_vpp2"),
                    os.path.join(tmp, "after", "pp8_vpp2"), "--iteration", "7", "--json")
    names = sorted(r["name"] for r in t.json(run)["runs"])
    t.check(names == ["after/pp8_vpp2", "after/pp8_vpp2 (ideal)", "before/pp8_vpp2",
                      "before/pp8_vpp2 (ideal)"], f"run names: {names}", run)

# An unknown iteration, a directory that is not a dump, a missing path: one line each.
run = t.sextant("pp", "view", dump, "--iteration", "99", expect_status=1)
t.expect_output(run, r"no iteration '99' in the dump \(it has 1 \.\. 20\)")
run = t.sextant("pp", "view", t.corpus("pp_dumps"), expect_status=1)
t.expect_output(run, r"pp_dumps: not a pipeline dump: no config\.json \(.*pp_rank_N\.json")
t.check("cannot open" not in run.stderr, "a folder is not a file that cannot be opened", run)
t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
# A folder of dumps names the dumps inside it.
run = t.sextant("pp", "view", t.corpus("pp_dumps/gpu8_layer64_gbs16"), expect_status=1)
t.expect_output(run, r"not a pipeline dump \(no config\.json\) but a folder of dumps: pp8, pp8_vpp2")
t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
# One file of a dump is JSON but not a trace: the message names the dump's directory.
for name in ("pp_rank_0.json", "config.json"):
    run = t.sextant("pp", "view", os.path.join(dump, name), expect_status=1)
    t.expect_output(run, rf"{name}: one file of the pipeline dump {re.escape(dump)}: .*"
                         rf"sextant pp view {re.escape(dump)}\)")
    t.check("trace" not in run.stderr, "a dump file was called a trace", run)
    t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
# --iteration picks an iteration of a dump: given with configs only, it is refused, not ignored.
config = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "examples", "llama3.1_8B-BF16-pretrain.yaml")
run = t.sextant("pp", "view", config, "--iteration", "3", "--json", expect_status=1)
t.expect_output(run, r"--iteration 3: picks an iteration of a measured dump")
t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
# A profiler trace is not a config: the message names the command that reads it.
trace = t.corpus("traces/llm_training/megatron-tp2-v100/rank0.pt.trace.json")
run = t.sextant("pp", "view", trace, expect_status=1)
t.expect_output(run, r"rank0\.pt\.trace\.json: a profiler trace: .*sextant trace report")
t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
t.passed()
