"""Row-by-row comparison of `trace report --format tracelens` CSV files with TraceLens's own
(generate_perf_report_pytorch): which columns are compared, how rows are keyed, and the
tolerances. Used by trace_report_tracelens_format.py (against the corpus's reference reports)
and by scripts/compare_with_tracelens.py (against TraceLens run side by side)."""
import ast
import collections
import csv
import re

# Documented omissions (docs/trace.md): kernel_summary's op category; the GEMM sheet's
# compute spec, kernel details, first UID and ROCm transpose flags. Process and thread names
# (from the trace's metadata events) are compared like every other column.
# The inference report's sheets also count each group's kernels (num_kernels), a column of
# its layout that Sextant's sheets do not have.
OMITTED = {"Parent op category", "Compute Spec", "kernel_details__summarize_kernel_stats",
           "trunc_kernel_details", "UID_first", "param: transpose", "ex_UID",
           "kernel_details_summary", "num_kernels"}
# unified_perf_summary omits the compute spec and TraceLens's event UIDs; it writes the
# kernel details, whose numbers TraceLens prints as numpy reprs (np.float64(...)), so they
# are compared with those reprs unwrapped; its GEMM parameters lack the ROCm transpose flags.
OMITTED_IN = {"unified_perf_summary": {"Compute Spec", "ex_UID"}}
# TraceLens's JAX report (generate_perf_report_jax) of an XPlane profile. op_conv's FLOP and
# byte columns differ by definition: TraceLens multiplies only the filter's spatial dimensions
# after the first (2 x kh x kw x outputs), Sextant counts every input channel and the whole
# window (2 x C_in x kd x kh x kw x outputs), and the whole filter's bytes (docs/trace.md).
JAX_FILES = ["gpu_timeline", "gpu_events_averages", "kernel_launchers",
             "kernel_launchers_summary", "kernel_launchers_summary_by_category",
             "kernel_launchers_unique_args", "df_xla_perf", "xla_summary", "op_conv"]
_CONV_RATES = {f"{m}_{s}" for m in ("TB/s", "TFLOPS/s")
               for s in ("mean", "median", "std", "min", "max")}
for _name in JAX_FILES:
    OMITTED_IN[_name] = set()
# Columns both write, with values that differ by a documented definition: not compared.
DIFFERS_IN = {"op_conv": {"GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first"} |
              _CONV_RATES}
SHEETS = ["GEMM", "UnaryElementwise", "BinaryElementwise", "SDPA_fwd", "SDPA_bwd",
          "Reduce_fwd", "Reduce_bwd", "Normalization", "CONV_fwd", "CONV_bwd"]
FILES = SHEETS + ["gpu_timeline", "kernel_summary", "ops_summary", "ops_summary_by_category",
                  "ops_unique_args", "unified_perf_summary",
         "short_kernel_histogram", "short_kernels_summary", "coll_analysis"]
# A perf sheet's rows are keyed by the op and every parameter column.
PARAMS = "params"
KEYS = {
    "SDPA_fwd": PARAMS, "SDPA_bwd": PARAMS, "Reduce_fwd": PARAMS, "Reduce_bwd": PARAMS,
    "Normalization": PARAMS, "CONV_fwd": PARAMS, "CONV_bwd": PARAMS,
    "GEMM": ["name", "param: M", "param: N", "param: K", "param: bias", "param: stride_A",
             "param: stride_B", "param: dtype_A_B", "param: B", "is_recompute"],
    "UnaryElementwise": ["name", "param: op_shape", "param: dtype_in_out", "param: stride_input",
                         "param: stride_output", "is_recompute"],
    "BinaryElementwise": ["name", "param: shape_in1", "param: shape_in2",
                          "param: dtype_in1_in2_out", "param: stride_input1",
                          "param: stride_input2", "param: stride_output", "is_recompute"],
    "gpu_timeline": ["type", "gpu_pid", "is_recompute"],
    "gpu_events_averages": ["type"],
    "kernel_launchers": ["UID"],
    "df_xla_perf": ["UID"],
    "kernel_launchers_summary": ["name"],
    "xla_summary": ["name"],
    "kernel_launchers_summary_by_category": ["op category"],
    "kernel_launchers_unique_args": ["name", "Input Dims", "Input type"],
    "ops_summary_by_category": ["op category", "is_recompute"],
    "ops_summary": ["name", "is_recompute"],
    "ops_unique_args": ["name", "op category", "thread_name", "Input Dims", "Input type",
                        "Input Strides", "Concrete Inputs", "is_recompute"],
    "unified_perf_summary": ["name", "op category", "thread_name", "Input Dims", "Input type",
                             "Input Strides", "Concrete Inputs", "is_recompute"],
    "kernel_summary": ["Parent cpu_op", "Kernel name", "Kernel stream"],
    "short_kernel_histogram": ["bin_start"],
    "coll_analysis": ["rank", "Process Group Name", "Process Group Ranks", "Collective name",
                      "Group size", "dtype", "In msg nelems", "Out msg nelems", "In split size",
                      "Out split size", "stream"],
    "short_kernels_summary": ["Parent cpu_op", "Input dims", "Input strides", "Concrete Inputs",
                              "Kernel name"],
}


def norm(text):
    """A key cell: numbers by value (pandas writes a column with gaps as floats, 8.0), and a
    missing parameter as empty (TraceLens's reports in the corpus leave it empty, its current
    release writes None, or nan in a column pandas read as numbers)."""
    if text in ("None", "nan"):
        return ""
    try:
        return repr(float(text))
    except ValueError:
        return text


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    if not text.strip():
        return [], []
    rows = list(csv.DictReader(text.splitlines()))
    return list(rows[0].keys()) if rows else text.splitlines()[0].split(","), rows


def unwrap(text):
    """TraceLens's kernel details as plain Python literals, its perf parameters without the
    ROCm GEMM transpose flags."""
    text = re.sub(r"np\.float64\(([^)]*)\)", r"\1", text)
    return re.sub(r", 'transpose': \([^)]*\)", "", text)


def close(a, b, column):
    if column in ("kernel_details_summary", "trunc_kernel_details", "perf_params",
                  "kernel_details__summarize_kernel_stats"):
        if column == "perf_params":
            return a == unwrap(b)
        # The short form rounds to 0.01 µs: a mean on a rounding boundary may land either side.
        return kernel_details_close(unwrap(a), unwrap(b),
                                    1.1e-2 if column.startswith("trunc") else 2.5e-3)
    try:
        x, y = float(a), float(b)
    except ValueError:
        return norm(a) == norm(b)
    # TraceLens takes kernel times as differences of float microsecond timestamps: their
    # rounding moves a spread of a few nanoseconds by up to 1 % (means and sums agree to 1e-6).
    # A double holds a microsecond timestamp of ~1.7e12 to 2.4e-4 µs, and a kernel time is
    # the difference of two: one call's may be 4.9e-4 µs from ours.
    if column.endswith("_std"):
        return abs(x - y) <= 2e-2 * max(abs(x), abs(y)) + 5e-4
    if column.startswith("Kernel Time") or (column.startswith("total_") and
                                            column.endswith(("_mean", "_median", "_min",
                                                             "_max", "_sum"))):
        return abs(x - y) <= 1e-4 * max(abs(x), abs(y)) + 5e-4
    # FLOPs, bytes and rates: 1e-3, as for TraceLens's roofline numbers.
    # A share of a total of many short kernels carries their timestamp rounding too.
    if column.split("_")[0] in ("GFLOPS", "Data Moved (MB)", "FLOPS/Byte", "TB/s", "TFLOPS/s",
                                "Percentage (%)"):
        return abs(x - y) <= 1e-3 * max(abs(x), abs(y)) + 1e-9
    return abs(x - y) <= 1e-4 * max(abs(x), abs(y)) + 1e-9


def kernel_details_close(a, b, absolute):
    """The same kernels in the same order, each number to 1e-4 (std to 2 %)."""
    try:
        mine, theirs = ast.literal_eval(a), ast.literal_eval(b)
    except (ValueError, SyntaxError):
        return False
    if len(mine) != len(theirs):
        return False
    for x, y in zip(mine, theirs):
        if x.keys() != y.keys():
            return False
        for key in x:
            if isinstance(x[key], float) and isinstance(y[key], (int, float)):
                tolerance = 2e-2 if key.startswith("std") else 1e-4
                if abs(x[key] - y[key]) > tolerance * max(abs(x[key]), abs(y[key])) + absolute:
                    return False
            elif x[key] != y[key]:
                return False
    return True




def compare(ours_path, ref_path, name):
    """Differences between one table of ours and TraceLens's: a list of messages (empty when
    every row matches)."""
    ours_header, ours = read(ours_path)
    ref_header, ref = read(ref_path)
    omitted = OMITTED_IN.get(name, OMITTED)
    expected = [c for c in ref_header if c not in omitted]
    problems = []
    if ours_header != expected:
        problems.append(f"header {ours_header}, TraceLens {ref_header}")
    if KEYS.get(name, PARAMS) == PARAMS:
        keys = ["name"] + [c for c in ref_header if c.startswith("param: ")] + \
            [c for c in ["is_recompute"] if c in ref_header]
    else:
        keys = [k for k in KEYS[name] if k in ref_header and k not in omitted]
    by_key = {tuple(norm(r.get(k, "")) for k in keys): r for r in ours}
    # Rows told apart only by an omitted column are compared by the C++ golden test.
    ambiguous = {k for k, n in collections.Counter(
        tuple(norm(r[k]) for k in keys) for r in ref).items() if n > 1}
    if len(ours) != len(ref):
        problems.append(f"{len(ours)} rows, TraceLens {len(ref)}")
    for index, r in enumerate(ref):
        key = tuple(norm(r[k]) for k in keys)
        if key in ambiguous:
            continue
        mine = by_key.get(key)
        if name == "short_kernel_histogram":
            mine = ours[index] if index < len(ours) else None
        if mine is None:
            problems.append(f"no row {key}")
            continue
        for column in expected:
            # Rows of equal time come in no set order (pandas sorts unstably), so a running
            # total over them is not comparable row by row.
            if name in ("ops_summary", "ops_unique_args", "unified_perf_summary") and \
                    column.startswith("Cumulative"):
                continue
            if column in DIFFERS_IN.get(name, set()):
                continue
            if column in r and column in mine and not close(mine[column], r[column], column):
                problems.append(f"{key} {column}: {mine[column]}, TraceLens {r[column]}")
    return problems
