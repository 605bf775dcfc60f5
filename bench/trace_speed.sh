#!/usr/bin/env bash
# Measures `sextant trace report` throughput and memory:
#   1. builds a >= 1 GB Kineto trace in /tmp by replicating the events of a corpus trace, each
#      copy later in time and with ids of its own (never committed), and decompresses the
#      largest corpus trace;
#   2. runs `trace report` on each with one thread under /usr/bin/time -v, RUNS times (default
#      3), and keeps the run with the least CPU time;
#   3. times Python's json.load on the same files;
#   4. runs json_scan_baseline (simdjson visiting every field, nothing else) on the same file;
#   5. prints MB/s per core, the speed-up over json.load and the ratio to the baseline (which
#      travels between machines better than MB/s), and peak RSS / file size;
#   6. runs `trace report` once on the 1.1 GB trace gzip-compressed (level 1) and prints its
#      CPU time and peak RSS against the size of the text.
# Usage: bench/trace_speed.sh [BUILD_DIR] [TARGET_MB]   (defaults: build, 1100)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
TARGET_MB="${2:-1100}"
RUNS="${RUNS:-3}"
SEXTANT="$BUILD/src/cli/sextant"
CORPUS="$ROOT/../shared/corpus/traces"
SOURCE="$CORPUS/TraceLens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz"
WORK="${TMPDIR:-/tmp}/sextant_trace_speed"
mkdir -p "$WORK"
[ -x "$SEXTANT" ] || { echo "build sextant first: $SEXTANT" >&2; exit 1; }

LARGEST="$WORK/owlv2.json"
[ -s "$LARGEST" ] || gzip -dc "$SOURCE" > "$LARGEST"
# Each copy is shifted in time and given ids of its own (correlation, External id, flow id,
# Python ids, ...), as the later steps of one long profile have: copies sharing ids would link
# every kernel to the first copy's launches and leave most per-call analysis undone.
BIG="$WORK/replicated_distinct_ids_${TARGET_MB}mb.json"
if [ ! -s "$BIG" ]; then
  python3 - "$LARGEST" "$BIG" "$TARGET_MB" <<'PY'
import json, sys
src, dst, target_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src) as f:
    trace = json.load(f)
events = trace.pop("traceEvents")
ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
span = (max(ts) - min(ts)) + 1000.0
ID_ARGS = ("External id", "correlation", "Record function id", "Python id",
           "Python parent id", "Ev Idx", "Sequence number")
ids = [e["id"] for e in events if isinstance(e.get("id"), int)]
ids += [v for e in events for k, v in e.get("args", {}).items()
        if k in ID_ARGS and isinstance(v, int)]
stride = max(ids, default=0) + 1
with open(dst, "w") as out:
    head = json.dumps(trace)[:-1]  # keep the metadata keys, reopen the object
    out.write(head + ', "traceEvents": [\n')
    copy, first = 0, True
    while out.tell() < target_mb * 1_000_000:
        shift = copy * span
        for e in events:
            if copy and e.get("ph") != "M":
                e = dict(e)
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] = round(e["ts"] + shift, 3)
                if isinstance(e.get("id"), int):
                    e["id"] += copy * stride
                args = e.get("args")
                if args and any(k in args for k in ID_ARGS):
                    args = dict(args)
                    for k in ID_ARGS:
                        if isinstance(args.get(k), int) and args[k] >= 0:
                            args[k] += copy * stride
                    e["args"] = args
            out.write(("" if first else ",\n") + json.dumps(e))
            first = False
        copy += 1
    out.write("\n]}\n")
PY
fi

measure() {  # file -> prints one result line
  local file="$1" mb log wall rss py
  mb=$(python3 -c "import os,sys; print(os.path.getsize(sys.argv[1]) / 1e6)" "$file")
  # The run with the least CPU time of $RUNS: on a shared machine the others waited for
  # caches, memory bandwidth or a core held by someone else.
  local best_cpu="" run run_cpu
  for run in $(seq "$RUNS"); do
    log="$WORK/time.$run.log"
    /usr/bin/time -v "$SEXTANT" trace report --threads 1 --json "$file" > /dev/null 2> "$log"
    run_cpu=$(awk -F: '/User time|System time/ {s += $2} END {print s}' "$log")
    if [ -z "$best_cpu" ] || awk -v a="$run_cpu" -v b="$best_cpu" 'BEGIN {exit !(a < b)}'; then
      best_cpu="$run_cpu"
      cp "$log" "$WORK/time.log"
    fi
  done
  log="$WORK/time.log"
  wall=$(python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
h, mnt, s = m.groups()
print((int(h or 0) * 3600) + int(mnt) * 60 + float(s))
PY
)
  rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$log")
  cpu="$best_cpu"
  py=$(python3 -c "
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1]) as f: json.load(f)
print(time.perf_counter() - t)" "$file")
  pycpu=$(python3 -c "
import json, sys, time
t = time.process_time()
with open(sys.argv[1]) as f: json.load(f)
print(time.process_time() - t)" "$file")
  # simdjson visiting every field: the fastest pass over this file this machine can make
  # without skipping anything; its best CPU time of $RUNS.
  local scan="" scan_run
  if [ -x "$BUILD/bench/json_scan_baseline" ]; then
    for run in $(seq "$RUNS"); do
      scan_run=$("$BUILD/bench/json_scan_baseline" "$file" | sed -n 's/.*CPU \([0-9.]*\) s.*/\1/p')
      if [ -z "$scan" ] || awk -v a="$scan_run" -v b="$scan" 'BEGIN {exit !(a < b)}'; then
        scan="$scan_run"
      fi
    done
  fi
  # On a shared machine wall time includes waiting for a core; CPU seconds do not.
  # The kernel's share (copying the file in, zeroing fresh pages) is what a virtual machine
  # varies most from run to run: printed apart.
  local user sys
  user=$(awk -F: '/User time/ {gsub(/ /, "", $2); print $2}' "$log")
  sys=$(awk -F: '/System time/ {gsub(/ /, "", $2); print $2}' "$log")
  python3 - "$file" "$mb" "$wall" "$cpu" "$rss" "$py" "$pycpu" "${scan:-0}" "$user" "$sys" <<'PY'
import sys, os
name = sys.argv[1]
mb, wall, cpu, rss_kb, py, pycpu, scan, user, system = (float(x) for x in sys.argv[2:])
print(f"{os.path.basename(name)}: {mb:.1f} MB")
print(f"  trace report (1 thread): wall {wall:.2f} s, CPU {cpu:.2f} s -> {mb / cpu:.0f} MB/s per core "
      f"({mb / wall:.0f} MB/s wall); CPU = {user:.2f} s user + {system:.2f} s system")
print(f"  python json.load:        wall {py:.2f} s, CPU {pycpu:.2f} s -> sextant is {pycpu / cpu:.1f}x faster per core "
      f"({py / wall:.1f}x by wall time)")
if scan > 0:
    print(f"  simdjson, every field: CPU {scan:.2f} s -> {mb / scan:.0f} MB/s per core; trace report "
          f"runs at {scan / cpu:.2f}x its speed")
print(f"  peak RSS {rss_kb / 1024:.0f} MiB = {rss_kb * 1024 / (mb * 1e6):.2f}x the file size")
PY
}

# The same text gzip-compressed, as most profiles are stored: decoded as it is read, so peak
# memory should stay near the plain file's, not the size of the text.
measure_compressed() {  # compressed file, size of its text in MB -> prints one result block
  local file="$1" text_mb="$2" log="$WORK/time.gz.log"
  /usr/bin/time -v "$SEXTANT" trace report --threads 1 --json "$file" > /dev/null 2> "$log"
  python3 - "$file" "$text_mb" "$log" <<'PY'
import os, re, sys
name, text_mb, log = sys.argv[1], float(sys.argv[2]), open(sys.argv[3]).read()
cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", log))
rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", log).group(1))
print(f"{os.path.basename(name)}: {os.path.getsize(name) / 1e6:.1f} MB holding {text_mb:.1f} MB of text")
print(f"  trace report (1 thread): CPU {cpu:.2f} s -> {text_mb / cpu:.0f} MB/s of text per core, "
      f"decoding included")
print(f"  peak RSS {rss_kb / 1024:.0f} MiB = {rss_kb * 1024 / (text_mb * 1e6):.2f}x the text size")
PY
}

measure "$LARGEST"
measure "$BIG"
BIG_GZ="$BIG.gz"
[ -s "$BIG_GZ" ] || gzip -1 -c "$BIG" > "$BIG_GZ"
measure_compressed "$BIG_GZ" "$(python3 -c "import os,sys; print(os.path.getsize(sys.argv[1]) / 1e6)" "$BIG")"
