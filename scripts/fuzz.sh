#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for N seconds (default 60) on
# its seeds: the repository's test data and, when present, the shared corpus.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# The build tree is build-fuzz/ unless SEXTANT_FUZZ_DIR names another one already configured
# with -DSEXTANT_FUZZ=ON (the test command reuses its sanitizer build); SEXTANT_FUZZ_MAX_LEN caps
# the input size (default 8 MiB); SEXTANT_FUZZ_RUNS=N stops each target after N executions
# instead of after SECONDS; SEXTANT_FUZZ_BUILD_TYPE sets the build type of a new build tree
# (default Debug; RelWithDebInfo runs the slow trace targets several times faster, with the
# same sanitizers). Findings are written to <build>/findings/. Targets that write files (trace
# merge, the input layer) write under $TMPDIR: a tmpfs such as /dev/shm spares the disk.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_EACH="${1:-60}"
shift || true
"$ROOT/scripts/install_deps.sh"
DIR="${SEXTANT_FUZZ_DIR:-$ROOT/build-fuzz}"
if [ ! -f "$DIR/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$DIR" -G Ninja -DSEXTANT_FUZZ=ON -DSEXTANT_BENCHMARKS=OFF \
    -DCMAKE_BUILD_TYPE="${SEXTANT_FUZZ_BUILD_TYPE:-Debug}" >/dev/null
fi
mapfile -t ALL < <(cd "$ROOT/src" && ls ./*/*_fuzz.cc | sed 's|^\./\([a-z_]*\)/\(.*\)\.cc$|\1/\2|')
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  for t in "${ALL[@]}"; do TARGETS+=("${t#*/}"); done
fi
cmake --build "$DIR" --target "${TARGETS[@]}" -j "$(nproc)" >/dev/null
CORPUS="${SEXTANT_CORPUS_DIR:-$ROOT/../shared/corpus}"
mkdir -p "$DIR/findings"
seeds_for() {  # the seed folders of one target: inputs of the kind it parses
  case "$1" in
    kineto_reader_fuzz | trace_merge_fuzz | compressed_input_fuzz) echo "$CORPUS/traces" ;;
    pickle_reader_fuzz | memory_snapshot_fuzz) echo "$ROOT/tests/data/snapshot $CORPUS/snapshots" ;;
    yaml_loader_fuzz | hardware_config_fuzz) echo "$ROOT/tests/data/config $ROOT/tests/data/hardware" ;;
    toml_loader_fuzz) echo "$ROOT/tests/data/config" ;;
    pp_dump_reader_fuzz) echo "$CORPUS/pp_dumps" ;;
    benchmark_artifact_fuzz) echo "$ROOT/tests/data/benchmark" ;;
    published_run_fuzz) echo "$CORPUS/validation" ;;
    efficiency_table_fuzz | calibration_file_fuzz) echo "$ROOT/tests/data/calibration $CORPUS/traces/TraceLens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs" ;;
    iteration_annotation_fuzz) echo "$ROOT/tests/data/annotation" ;;
    capture_index_fuzz) echo "$CORPUS/traces/TraceLens/inference/sglang_decode/capture_traces" ;;
    xplane_reader_fuzz) echo "$CORPUS/traces/TraceLens/jax $CORPUS/traces/TraceLens/mi300/jax_conv_minimal_legacy" ;;
  esac
}
status=0
for t in "${TARGETS[@]}"; do
  area=""
  for a in "${ALL[@]}"; do [ "${a#*/}" = "$t" ] && area="${a%%/*}"; done
  bin="$DIR/src/$area/$t"
  work="$DIR/corpus/$t"
  mkdir -p "$work"
  seeds=()
  for s in $(seeds_for "$t"); do [ -d "$s" ] && seeds+=("$s"); done
  # Seeds reach several MB (the chunked trace reader switches chunks every 512 KB); a short run
  # may cap them (SEXTANT_FUZZ_MAX_LEN) so that loading the seeds does not take the whole run.
  limit=(-max_total_time="$SECONDS_EACH")
  if [ -n "${SEXTANT_FUZZ_RUNS:-}" ]; then limit=(-runs="$SEXTANT_FUZZ_RUNS"); fi
  echo "== $t: ${limit[0]#-}"
  if ! "$bin" "${limit[@]}" -max_len="${SEXTANT_FUZZ_MAX_LEN:-8388608}" \
      -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$DIR/findings/$t-" -print_final_stats=1 "$work" "${seeds[@]}" \
      2>"$DIR/findings/$t.log"; then
    echo "   finding: see $DIR/findings/$t.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$DIR/findings/$t.log" | sed 's/^/   /'
done
exit $status
