#!/usr/bin/env bash
# `sextant memory snapshot` against PyTorch's own snapshot tool, on the same files in one run.
#
# Debian 12 ships python3-torch 1.13, whose `python3 -m torch.cuda._memory_viz` offers
# stats|segments|memory|compare and reads the 1.13 snapshot layout: a bare list of segments
# (torch.cuda.memory_snapshot()). The corpus snapshots are newer dicts, so each is first
# rewritten as its list of segments (a restricted unpickler, no code runs) and both tools read
# those files. `segments` renders through flamegraph.pl, which the tool downloads from GitHub;
# offline it is timed in-process with its own `format_flamegraph` hook returning the text it
# would have rendered. Prints wall times, the speed ratio, and checks that segment count,
# reserved bytes and bytes per block state agree exactly.
#
# Usage: bench/snapshot_vs_memory_viz.sh [SEXTANT_BINARY] [SNAPSHOT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SEXTANT="${1:-$ROOT/build/src/cli/sextant}"
CORPUS="${2:-$ROOT/../shared/corpus/snapshots}"
PY=/usr/bin/python3  # Debian's interpreter, where python3-torch installs

if ! "$PY" -c 'import torch' 2>/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends python3-torch
fi
[ -x "$SEXTANT" ] || { echo "no sextant binary at $SEXTANT (build first)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$PY" - "$SEXTANT" "$CORPUS" "$WORK" <<'PYEOF'
import glob, json, os, pickle, subprocess, sys, time
sextant, corpus, work = sys.argv[1:4]

class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing {module}.{name}")

def best_of(n, fn):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter(); fn(); best = min(best, time.perf_counter() - t)
    return best

torch_version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                               capture_output=True, text=True, check=True).stdout.strip()
print(f"torch {torch_version} (python3 -m torch.cuda._memory_viz) vs {sextant}")
print(f"{'file':<48} {'MB':>5} {'viz stats':>9} {'viz segs*':>9} {'sextant':>8} {'ratio':>6}  totals")
files = sorted(glob.glob(os.path.join(corpus, "*", "*.pickle")), key=os.path.getsize)
failures = 0
for path in files:
    name = os.path.relpath(path, corpus)
    with open(path, "rb") as f:
        data = DataOnly(f).load()
    segments = data["segments"] if isinstance(data, dict) else data
    converted = os.path.join(work, name.replace("/", "__"))
    with open(converted, "wb") as f:
        pickle.dump(segments, f, protocol=4)

    viz_cmd = [sys.executable, "-m", "torch.cuda._memory_viz", "stats", converted]
    viz = subprocess.run(viz_cmd, capture_output=True, text=True)
    if viz.returncode != 0:
        # e.g. SnapViewer's hand-made sample, whose blocks do not add up to its segments.
        print(f"{name:<48} skipped: _memory_viz stats refuses it "
              f"({viz.stderr.strip().splitlines()[-1]})")
        continue
    t_viz = best_of(3, lambda: subprocess.run(viz_cmd, capture_output=True, check=True))
    # `segments` without flamegraph.pl: the same Python work, rendering hook returns its input.
    seg_code = ("import pickle,sys; import torch.cuda._memory_viz as m; "
                "m.segments(pickle.load(open(sys.argv[1],'rb')), format_flamegraph=lambda s: s)")
    t_seg = best_of(3, lambda: subprocess.run([sys.executable, "-c", seg_code, converted],
                                              capture_output=True, check=True))
    ours_cmd = [sextant, "memory", "snapshot", converted, "--json"]
    t_ours = best_of(3, lambda: subprocess.run(ours_cmd, capture_output=True, check=True))
    ours = json.loads(subprocess.run(ours_cmd, capture_output=True, text=True, check=True).stdout)

    # Reference totals from _memory_viz.stats() itself (its printout rounds the bytes).
    ref_code = ("import json,pickle,sys; import torch.cuda._memory_viz as m; "
                "s = m.stats(pickle.load(open(sys.argv[1],'rb'))); "
                "print(json.dumps({k: (v.value if hasattr(v,'value') else v) for k,v in s.items()}))")
    ref = json.loads(subprocess.run([sys.executable, "-c", ref_code, converted],
                                    capture_output=True, text=True, check=True).stdout)
    dev = ours["devices"][0] if ours["devices"] else {}
    active = ref.get("active_allocated", 0) + ref.get("active_pending_free", 0)
    agree = (sum(d["segments"] for d in ours["devices"]) == ref["segments"] and
             sum(d["reserved_bytes"] for d in ours["devices"]) == ref["total_size"] and
             sum(d["allocated_bytes"] for d in ours["devices"]) == active and
             sum(d["reserved_bytes"] - d["allocated_bytes"] for d in ours["devices"]) ==
             ref.get("inactive", 0))
    failures += 0 if agree else 1
    mb = os.path.getsize(converted) / 1e6
    print(f"{name:<48} {mb:5.2f} {t_viz:8.3f}s {t_seg:8.3f}s {t_ours:7.3f}s {t_viz / t_ours:5.1f}x  "
          f"{'agree' if agree else 'DIFFER'} (segments {ref['segments']}, reserved {ref['total_size']}, "
          f"active {active})")

# The full snapshots (dict layout with traces) only sextant reads; time it on the largest.
largest = max(files, key=os.path.getsize)
full_cmd = [sextant, "memory", "snapshot", largest, "--json"]
t_full = best_of(3, lambda: subprocess.run(full_cmd, capture_output=True, check=True))
t_load = best_of(3, lambda: DataOnly(open(largest, "rb")).load())
print(f"\nlargest full snapshot {os.path.relpath(largest, corpus)}: sextant full analysis "
      f"{t_full:.3f}s; Python pickle.load alone (in-process, no analysis) {t_load:.3f}s")
print("* viz segs: `segments` minus the flamegraph.pl rendering it downloads")
sys.exit(1 if failures else 0)
PYEOF
