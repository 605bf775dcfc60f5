#!/usr/bin/env python3
"""Runs TraceLens and `sextant trace report --format tracelens` on the same traces and prints,
per table, whether every row agrees (the tolerances of tests/cli/tracelens_compare.py).

TraceLens is a side-by-side reference, not a dependency: point --tracelens at a checkout of
AMD-AGI/TraceLens and give a Python that has pandas (Debian: apt-get install python3-pandas
python3-tqdm python3-openpyxl, then --python /usr/bin/python3).

Reading the output: TraceLens computes busy times from float microsecond timestamps (1e12 to
7e12 in the corpus's traces, held to 2^-12 to 2^-10 us), so its kernel times carry that
rounding; the comparison allows for it as derived from the trace
(tests/cli/tracelens_compare.py). Documented differences of definition are listed in
docs/trace.md.

An XLA profile (`*.xplane.pb`) is compared with TraceLens's JAX report
(generate_perf_report_jax.py, which needs the xprof / tensorboard-plugin-profile package).

Usage: scripts/compare_with_tracelens.py --tracelens DIR [--python PY] [--sextant BIN] TRACE...
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
from tracelens_compare import Timestamps, compare, read  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracelens", required=True, help="a TraceLens checkout")
    parser.add_argument("--python", default="/usr/bin/python3", help="a Python with pandas")
    parser.add_argument("--sextant", default=os.path.join(ROOT, "build", "src", "cli", "sextant"))
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    reporting = os.path.join(args.tracelens, "TraceLens", "Reporting")
    if not os.path.exists(os.path.join(reporting, "generate_perf_report_pytorch.py")):
        sys.exit(f"{args.tracelens}: no TraceLens/Reporting/generate_perf_report_pytorch.py")
    failed = False
    for trace in args.traces:
        print(f"== {trace}")
        with tempfile.TemporaryDirectory() as work:
            theirs, ours = os.path.join(work, "tracelens"), os.path.join(work, "sextant")
            env = dict(os.environ, PYTHONPATH=os.path.abspath(args.tracelens))
            # An XLA profile goes to TraceLens's JAX report (it needs xprof's Python package).
            if trace.endswith(".xplane.pb"):
                command = [args.python, os.path.join(reporting, "generate_perf_report_jax.py"),
                           "--profile_path", trace]
            else:
                command = [args.python, os.path.join(reporting, "generate_perf_report_pytorch.py"),
                           "--profile_json_path", trace]
            run = subprocess.run(command + ["--output_csvs_dir", theirs],
                                 capture_output=True, text=True, env=env)
            if run.returncode != 0:
                print(f"  TraceLens failed ({run.returncode}): "
                      f"{(run.stderr.strip().splitlines() or [''])[-1]}")
                failed = True
                continue
            run = subprocess.run([args.sextant, "trace", "report", trace, "--format",
                                  "tracelens", "--csv", ours], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"  sextant failed ({run.returncode}): {run.stderr.strip()}")
                failed = True
                continue
            mine, reference = set(os.listdir(ours)), set(os.listdir(theirs))
            timestamps = Timestamps.of_traces([trace])
            categories = {}
            if "ops_unique_args.csv" in reference:
                _, rows = read(os.path.join(theirs, "ops_unique_args.csv"))
                categories = {r["name"]: r["op category"] for r in rows}
            only = sorted(reference - mine)
            if only:
                # Tables Sextant does not write yet (docs/trace.md lists them): a difference.
                print(f"  only TraceLens writes: {', '.join(only)}")
                failed = True
            for name in sorted(mine & reference):
                table = name[:-len(".csv")]
                problems = compare(os.path.join(ours, name), os.path.join(theirs, name), table,
                                   timestamps, categories)
                print(f"  {table}: " + ("agrees" if not problems else
                                        f"{len(problems)} differences, e.g. {problems[0]}"))
                failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
