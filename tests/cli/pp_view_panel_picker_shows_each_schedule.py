#!/usr/bin/env python3
"""`pp view --pipeline-schedule-algorithm all` on a config draws one run per schedule, all from
the same file: the page's panel picker must show each run's schedule, however long the file's
name, or the runs cannot be told apart. Checked in a headless Chromium (skipped without it):
the last character of every run's name is laid out inside the picker's visible box."""
import json
import os
import re
import tempfile

import harness

# For every run in the picker: its name, and whether its last character is drawn inside the
# visible (not clipped) box of the name.
MEASURE = r"""
const out = [];
for (const row of document.querySelectorAll('.pick-run')) {
  const box = row.querySelector('.pick-run-name');
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let last = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (n.length) last = n;
  const range = document.createRange();
  range.setStart(last, last.length - 1);
  range.setEnd(last, last.length);
  const r = range.getBoundingClientRect(), clip = box.getBoundingClientRect();
  out.push({name: box.textContent, visible: r.right <= clip.right + 0.5 && r.width > 0});
}
const pre = document.createElement('pre');
pre.id = 'picker-measure';
pre.textContent = JSON.stringify(out);
document.body.append(pre);
"""

t = harness.Test()
config = t.corpus("primus/examples/megatron/configs/MI325X/llama3.1_70B-BF16-pretrain.yaml")
with tempfile.TemporaryDirectory() as tmp:
    html = os.path.join(tmp, "all.html")
    run = t.sextant("pp", "view", config, "--use_torch_fsdp2=false",
                    "--pipeline_model_parallel_size=8", "--num-virtual-stages-per-pipeline-rank",
                    "2", "--pipeline-schedule-algorithm", "all", "--html", html)
    # The schedules the console printed a table for.
    schedules = re.findall(r"^llama3\.1_70B-BF16-pretrain\.yaml · (\S+) \(simulated\)",
                           run.stdout, re.M)
    t.check(len(schedules) >= 3, f"expected several schedules, got {schedules}", run)
    dom, console = t.chromium(html, MEASURE)
    t.check(not console, "the page logged to the console:\n" + "\n".join(console), run)
    found = re.search(r'<pre id="picker-measure">(.*?)</pre>', dom, re.S)
    t.check(found is not None, "the page did not load", run)
    rows = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    names = [r["name"] for r in rows]
    t.check(names == [f"llama3.1_70B-BF16-pretrain.yaml · {s}" for s in schedules],
            f"picker names {names} are not the runs the console printed ({schedules})", run)
    cut = [r["name"] for r in rows if not r["visible"]]
    t.check(not cut, f"the picker cuts off the end of {cut}", run)
t.passed()
