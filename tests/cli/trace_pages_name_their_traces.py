#!/usr/bin/env python3
"""The HTML pages of `trace report` and `trace diff` name what they show in their title and
heading (every page was "Sextant trace report"): the directory of a run's rank traces and the
rank count, a single file by its path, the two sides of a diff. `serve`'s export of a trace is
the same bytes as `trace report --html` of that file."""
import os
import re
import tempfile
import urllib.request

import harness


def title(path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    match = re.search(r"<title>(.*?)</title>", page)
    heading = re.search(r"<h1>(.*?)</h1>", page)
    return (match.group(1) if match else None, heading.group(1) if heading else None)


t = harness.Test()
ranks = t.corpus("traces/llm_training/megatron-tp2-v100")
one = os.path.join(ranks, "rank0.pt.trace.json")
with tempfile.TemporaryDirectory() as tmp:
    page = os.path.join(tmp, "ranks.html")
    run = t.sextant("trace", "report", ranks, "--html", page)
    want = f"Trace report: {ranks} (2 ranks)"
    t.check(title(page) == (want, want), f"title and heading {title(page)}, expected {want!r}", run)
    page = os.path.join(tmp, "one.html")
    run = t.sextant("trace", "report", one, "--html", page)
    want = f"Trace report: {one}"
    t.check(title(page) == (want, want), f"title and heading {title(page)}, expected {want!r}", run)
    diff = os.path.join(tmp, "diff.html")
    other = os.path.join(ranks, "rank1.pt.trace.json")
    run = t.sextant("trace", "diff", one, other, "--html", diff)
    want = f"Trace diff: {one} vs {other}"
    t.check(title(diff) == (want, want), f"title and heading {title(diff)}, expected {want!r}", run)
    proc, url = t.start_server("serve", one)
    try:
        with urllib.request.urlopen(url + "export/0.html", timeout=120) as r:
            exported = r.read()
    finally:
        t.stop_server(proc)
    with open(page, "rb") as f:
        t.check(exported == f.read(), "serve's /export/0.html differs from trace report --html")
t.passed()
