"""Row-by-row comparison of `trace report --format tracelens` CSV files with TraceLens's own
(generate_perf_report_pytorch and generate_perf_report_jax): which columns are compared, how
rows are keyed, and the tolerances. Used by trace_report_tracelens_format.py (against the
corpus's reference reports) and by scripts/compare_with_tracelens.py (against TraceLens run
side by side).

Tolerances. Times and counts agree to 1e-4 relative; FLOPs, bytes and rates to 1e-3. On top
of that, a value that TraceLens derives from timestamps gets the allowance of its float
arithmetic (class Timestamps): TraceLens holds a timestamp as a double in microseconds, and at
the trace clock's magnitude (about 1e12 us) consecutive doubles are u = math.ulp(last
timestamp) apart (2^-12 us at 1.4e12, 2^-10 us at 4.4e12 and above). A start it reads and an
end it adds (ts + dur) are each within u of the exact value Sextant keeps in integer
nanoseconds, so a busy time (the union of intervals) moves by at most u per endpoint that
enters it: 2u per kernel. Per column, with m the most GPU activities (kernels, copies, fills)
one call of the row's op launches in the trace, nested calls' included (or as many as the
row lists, for the ops of a graph replay), and n the row's calls:

- one call's time (mean, median, min, max): E = 2·m·u;
- a sum over the row's calls: n·E (in ms: n·E/1000);
- a sample standard deviation: E·sqrt(n/(n-1)) (each value moves by at most E, and the
  spread of those moves is at most that);
- a rate F/t (TB/s, TFLOPS/s): r_max·E/(t_min - E), from the row's largest rate and
  shortest time;
- a share of the table's total (Percentage (%)): 100·(a + p/100·A)/T, with a the row's and A
  the table's allowance of the time the share is of, T that total; a running share
  (Cumulative Percentage (%)) the same with the rows' allowances summed up to its tie group's
  end (below);
- a GPU timeline row: u per endpoint of the activities it is made of (a union moves by at
  most the moves of its interval endpoints; a difference of unions by those of both sides,
  counting only the subtracted activities that come within 2u of the kept ones), its
  percent as a share of total_time (2 endpoints).

Kernel durations themselves (kernel_summary, the short kernel study, coll_analysis, the kernel
details) and CPU durations are read from `dur` and get no allowance (a share of the timeline's
total_time moves by 2u/T, below 1e-9 relative). An XLA profile's report gets none either.

Rows of equal time: TraceLens sorts the share tables by time with pandas's unstable sort, so
rows of the same time (within their allowances) come in no set order, and a running share
over them depends on that order. A row's Cumulative Percentage (%) is therefore checked to lie
between the value it has when its tie group starts with it (the running share before the
group plus its own share) and the value at the group's end, both from TraceLens's rows; for a
row tied with no other, that is TraceLens's value itself."""
import ast
import bisect
import collections
import csv
import gzip
import json
import math
import re

# Documented omissions (docs/trace.md): kernel_summary's op category; the GEMM sheet's
# compute spec, kernel details, first UID and ROCm transpose flags. Process and thread names
# (from the trace's metadata events) are compared like every other column.
# The inference report's layout adds columns that Sextant's eager layout does not have: each
# group's kernel count (num_kernels), the nn.Module (parent_module) and call stacks.
OMITTED = {"Parent op category", "Compute Spec", "kernel_details__summarize_kernel_stats",
           "trunc_kernel_details", "UID_first", "param: transpose", "ex_UID",
           "kernel_details_summary", "num_kernels", "parent_module", "call_stack",
           "call_stack_first", "call_stack_full", "entry_point"}
# unified_perf_summary omits the compute spec and TraceLens's event UIDs; it writes the
# kernel details, whose numbers TraceLens prints as numpy reprs (np.float64(...)), so they
# are compared with those reprs unwrapped; its GEMM parameters lack the ROCm transpose flags.
OMITTED_IN = {"unified_perf_summary": {"Compute Spec", "ex_UID"},
              # An upsampling row's extra input and output shapes (its op_shape is the output).
              "UnaryElementwise": OMITTED | {"param: input_shape", "param: output_shape"}}
# TraceLens's JAX report (generate_perf_report_jax) of an XPlane profile. op_conv's FLOP and
# byte columns differ by definition: TraceLens multiplies only the filter's spatial dimensions
# after the first (2 x kh x kw x outputs), Sextant counts every input channel and the whole
# window (2 x C_in x kd x kh x kw x outputs), and the whole filter's bytes (docs/trace.md).
JAX_FILES = ["gpu_timeline", "gpu_events_averages", "kernel_launchers",
             "kernel_launchers_summary", "kernel_launchers_summary_by_category",
             "kernel_launchers_unique_args", "df_xla_perf", "xla_summary", "op_conv"]
_RATES = {f"{m}_{s}" for m in ("TB/s", "TFLOPS/s")
          for s in ("mean", "median", "std", "min", "max")}
for _name in JAX_FILES:
    OMITTED_IN[_name] = set()
# Columns both write, with values that differ by a documented definition: not compared.
DIFFERS_IN = {"op_conv": {"GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first"} | _RATES}
# The same for some rows only: Sextant has no perf model of torch.compile's Triton kernels,
# whose unified_perf_summary rows are plain launcher rows without FLOPs (docs/trace.md).
DIFFERS_IN_ROWS = {"unified_perf_summary": (
    lambda row: row.get("op category") == "triton",
    {"has_perf_model", "GFLOPS", "Data Moved (MB)", "FLOPS/Byte", "perf_params"} | _RATES)}
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
# The column each table's Percentage (%) is a share of (TraceLens sorts by it, largest first).
SHARE_OF = {"ops_summary": "total_direct_kernel_time_sum",
            "ops_unique_args": "total_direct_kernel_time_sum",
            "ops_summary_by_category": "total_direct_kernel_time_ms",
            "unified_perf_summary": "Kernel Time (µs)_sum",
            "kernel_launchers_summary": "total_direct_kernel_time_sum",
            "kernel_launchers_unique_args": "total_direct_kernel_time_sum",
            "kernel_launchers_summary_by_category": "total_direct_kernel_time_ms"}
CALLS = ("operation_count", "Count", "name_count")
# Kernels the GPU timeline counts as communication (docs/trace.md, gpu_timeline).
COMMUNICATION = re.compile(r"nccl|rccl|cross_device_reduce|deep_ep::|dpsk::ep::|mscclpp|nvshmem|"
                           r"multimem_all_reduce|one_shot_all_reduce|two_shot_all_reduce", re.I)


class Timestamps:
    """What TraceLens's float microsecond timestamps can move a value by (module docstring):
    u, the spacing of doubles at the trace's last timestamp; per op name, the most GPU
    activities one call launched (its subtree); per GPU timeline row, the endpoints that enter
    it. Without a trace (an XLA profile, or none given) every allowance is 0."""

    def __init__(self, ulp=0.0, activities_per_call=None, timeline_endpoints=None):
        self.ulp = ulp
        self.activities_per_call = activities_per_call or {}
        self.timeline_endpoints = timeline_endpoints or {}

    @classmethod
    def of_traces(cls, traces):
        """From Kineto JSON traces: the first is the one reported (its GPU timeline), the
        others (a graph replay's capture trace) add the calls they record."""
        if not traces or not traces[0].endswith((".json", ".json.gz")):
            return cls()
        last, per_call, endpoints = 0.0, {}, {}
        for index, path in enumerate(traces):
            events = _events(path)
            last = max(last, max((e["ts"] + (e.get("dur") or 0) for e in events), default=0.0))
            for name, count in _activities_per_call(events).items():
                per_call[name] = max(per_call.get(name, 0), count)
            if index == 0:
                endpoints = _timeline_endpoints(events, math.ulp(float(last)))
        return cls(math.ulp(float(last)), per_call, endpoints)

    def per_call(self, row, categories):
        """E: how far one call's busy time may be from the exact one. A call's activities are
        counted in the trace, or as many as the row lists (num_kernels, its kernel details):
        a graph replay runs the kernels of ops that its capture trace records without them."""
        listed = int(number(row.get("num_kernels")) or 0)
        for column in ("kernel_details__summarize_kernel_stats", "kernel_details_summary"):
            if row.get(column):
                listed = max(listed, len(ast.literal_eval(unwrap(row[column]))))
        op = row.get("name")
        if op is None:  # a category row: its ops' most
            category = row.get("op category")
            counts = [self.activities_per_call.get(o, 0) for o, c in categories.items()
                      if c == category] or [max(self.activities_per_call.values(), default=0)]
            most = max(counts)
        elif op.endswith("(Synthetic Op)") or op.startswith("pseudo_op::"):
            most = 1  # one kernel of its own
        else:
            most = self.activities_per_call.get(op, 0)
        return 2 * max(most, listed) * self.ulp


def _events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    return [e for e in events if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]


def _category(event):
    return (event.get("cat") or "").lower()


def _activities(events):
    return [e for e in events if _category(e) in ("kernel", "gpu_memcpy", "gpu_memset")]


def _activities_per_call(events):
    """Op name -> the most GPU activities (kernels, copies, fills) one call of it launched,
    its nested calls' included; a runtime call outside any op counts as a call of its own."""
    ops, launches = collections.defaultdict(list), collections.defaultdict(list)
    for e in events:
        thread = (e.get("pid"), e.get("tid"))
        if _category(e) == "cpu_op":
            ops[thread].append((e["ts"], -(e.get("dur") or 0), e.get("name")))
        elif _category(e) in ("cuda_runtime", "cuda_driver"):
            launches[thread].append((e["ts"], e.get("dur") or 0, e.get("name"),
                                     (e.get("args") or {}).get("correlation")))
    names, calls_of = [], {}
    for thread, runtime_calls in launches.items():
        calls, stack, i = sorted(ops.get(thread, [])), [], 0
        for ts, dur, runtime_name, correlation in sorted(runtime_calls, key=lambda c: c[:2]):
            while i < len(calls) and calls[i][0] <= ts:
                start, minus_dur, name = calls[i]
                while stack and stack[-1][0] <= start:
                    stack.pop()
                names.append(name)
                stack.append((start - minus_dur, len(names) - 1))
                i += 1
            while stack and stack[-1][0] < ts + dur:
                stack.pop()
            if not stack:
                names.append(runtime_name)
            if correlation is not None:
                calls_of[correlation] = [c for _, c in stack] or [len(names) - 1]
    count = collections.Counter()
    for activity in _activities(events):
        for call in calls_of.get((activity.get("args") or {}).get("correlation"), ()):
            count[call] += 1
    most = {}
    for call, n in count.items():
        most[names[call]] = max(most.get(names[call], 0), n)
    return most


def _timeline_endpoints(events, ulp):
    """GPU timeline row -> how many activity endpoints its time depends on."""
    kinds = collections.defaultdict(list)
    for e in _activities(events):
        name = e.get("name") or ""
        if _category(e) == "gpu_memcpy" or name.startswith(("__amd_rocclr_copyBuffer",
                                                            "MEMORY_COPY")):
            kind = "memcpy"
        elif _category(e) == "kernel" and COMMUNICATION.search(name):
            kind = "comm"
        else:
            kind = "computation"
        kinds[kind].append((e["ts"], e["ts"] + (e.get("dur") or 0)))

    def near(kept, subtracted):
        """Subtracted intervals within 2u of a kept one: only they can move |kept \\ them|."""
        merged = []
        for start, end in sorted(kept):
            if merged and start <= merged[-1][1] + 4 * ulp:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        starts = [m[0] for m in merged]
        n = 0
        for start, end in subtracted:
            i = bisect.bisect_right(starts, end + 2 * ulp) - 1
            n += i >= 0 and merged[i][1] >= start - 2 * ulp
        return n

    computation, comm, memcpy = kinds["computation"], kinds["comm"], kinds["memcpy"]
    every = len(computation) + len(comm) + len(memcpy)
    return {"computation_time": 2 * len(computation),
            "exposed_comm_time": 2 * (len(comm) + near(comm, computation)),
            "exposed_memcpy_time": 2 * (len(memcpy) + near(memcpy, computation + comm)),
            "busy_time": 2 * every, "idle_time": 2 * every + 2, "total_time": 2,
            "total_comm_time": 2 * len(comm), "total_memcpy_time": 2 * len(memcpy)}


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
    """(header, rows); (None, []) for an empty file, as pandas writes a table without columns."""
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    if not text.strip():
        return None, []
    rows = list(csv.DictReader(text.splitlines()))
    return list(rows[0].keys()) if rows else next(csv.reader(text.splitlines())), rows


def unwrap(text):
    """TraceLens's kernel details as plain Python literals, its perf parameters without the
    ROCm GEMM transpose flags and an upsampling's extra input and output shapes."""
    text = re.sub(r"np\.float64\(([^)]*)\)", r"\1", text)
    text = re.sub(r"'input_shape': \([^)]*\), 'output_shape': \([^)]*\), (?='op_shape')", "",
                  text)
    return re.sub(r", 'transpose': \([^)]*\)", "", text)


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def within(x, y, relative, absolute):
    return abs(x - y) <= relative * max(abs(x), abs(y)) + absolute + 1e-9


def relative_tolerance(column):
    # FLOPs, bytes and rates: 1e-3, as for TraceLens's roofline numbers; times, counts and
    # their shares: 1e-4.
    if column.split("_")[0] in ("GFLOPS", "Data Moved (MB)", "FLOPS/Byte", "TB/s", "TFLOPS/s"):
        return 1e-3
    return 1e-4


def close(a, b, column, absolute=0.0):
    if column in ("kernel_details_summary", "trunc_kernel_details", "perf_params",
                  "kernel_details__summarize_kernel_stats"):
        if column == "perf_params":
            return a == unwrap(b)
        # Kernel durations are read from `dur`: to 1e-4. The short form rounds a mean to
        # 0.01 us: on a rounding boundary (4.115, which TraceLens holds as 4.11499...) the two
        # land one step apart.
        return kernel_details_close(unwrap(a), unwrap(b),
                                    0.01 if column.startswith("trunc") else 0.0)
    x, y = number(a), number(b)
    if x is None or y is None:
        return norm(a) == norm(b)
    return within(x, y, relative_tolerance(column), absolute)


def kernel_details_close(a, b, absolute):
    """The same kernels in the same order, each number to 1e-4."""
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
                if not within(x[key], y[key], 1e-4, absolute):
                    return False
            elif x[key] != y[key]:
                return False
    return True


def busy_time(column):
    """The statistic of a busy-time column (mean, sum, ms, ...), or None."""
    for prefix in ("Kernel Time (µs)_", "total_direct_kernel_time_", "total_subtree_kernel_time_"):
        if column.startswith(prefix) and column[len(prefix):] != "count":
            return column[len(prefix):]
    return None


def allowance(column, row, calls, per_call):
    """The float-timestamp allowance of one cell of a TraceLens row (module docstring)."""
    statistic = busy_time(column)
    if statistic in ("mean", "median", "min", "max"):
        return per_call
    if statistic == "std":
        return per_call * math.sqrt(calls / (calls - 1)) if calls > 1 else 0.0
    if statistic == "sum":
        return calls * per_call
    if statistic == "ms":
        return calls * per_call / 1000
    rate = column.split("_")[0]
    if rate in ("TB/s", "TFLOPS/s"):
        fastest, shortest = number(row.get(rate + "_max")), number(row.get("Kernel Time (µs)_min"))
        if fastest is None or shortest is None or shortest <= per_call:
            return 0.0
        spread = math.sqrt(calls / (calls - 1)) if column.endswith("_std") and calls > 1 else 1
        return spread * fastest * per_call / (shortest - per_call)
    return 0.0


def by_parent_module(header, rows, name):
    """The inference report's ops_summary / ops_summary_by_category, split by nn.Module, summed
    per op (or category) as Sextant's eager table has them, largest first, running share
    recomputed."""
    key = "name" if name == "ops_summary" else "op category"
    dropped = {"parent_module", "call_stack_first", "total_subtree_kernel_time_count"}
    summed = {}
    for r in rows:
        k = (r[key], r.get("is_recompute"))
        if k not in summed:
            summed[k] = {c: r[c] for c in header if c not in dropped}
            continue
        total = summed[k]
        for c in ("total_direct_kernel_time_sum", "total_subtree_kernel_time_sum",
                  "total_direct_kernel_time_ms", "Percentage (%)"):
            if c in total:
                total[c] = repr(float(total[c]) + float(r[c]))
        total["Count"] = str(int(total["Count"]) + int(r["Count"]))
        if "Categories" in total:
            total["Categories"] = repr(sorted(set(ast.literal_eval(total["Categories"])) |
                                              set(ast.literal_eval(r["Categories"]))))
    out = sorted(summed.values(), key=lambda r: -float(r["Percentage (%)"]))
    running = 0.0
    for r in out:
        running += float(r["Percentage (%)"])
        r["Cumulative Percentage (%)"] = repr(running)
    return [c for c in header if c not in dropped], out


def compare(ours_path, ref_path, name, timestamps=None, categories=None):
    """Differences between one table of ours and TraceLens's: a list of messages (empty when
    every row matches). timestamps: a Timestamps of the trace (no allowance without);
    categories: op name -> op category (TraceLens's ops_unique_args), for category rows."""
    timestamps = timestamps or Timestamps()
    categories = categories or {}
    ours_header, ours = read(ours_path)
    ref_header, ref = read(ref_path)
    if ref_header is None:
        # TraceLens writes a table without rows as an empty file; Sextant keeps its header.
        return [f"{len(ours)} rows, TraceLens none"] if ours else []
    ours_header = ours_header or []
    omitted = OMITTED_IN.get(name, OMITTED)
    problems = []
    if "parent_module" in ref_header and name in ("ops_summary", "ops_summary_by_category"):
        ref_header, ref = by_parent_module(ref_header, ref, name)
        expected = [c for c in ref_header if c not in omitted]
        # The eager layout: the inference report's columns, and subtree ms.
        if [c for c in ours_header if c in expected] != expected:
            problems.append(f"header {ours_header}, TraceLens summed {expected}")
    else:
        expected = [c for c in ref_header if c not in omitted]
        # The inference report orders a sheet's columns its own way (num_kernels marks it).
        if ("num_kernels" in ref_header and sorted(ours_header) != sorted(expected)) or \
                ("num_kernels" not in ref_header and ours_header != expected):
            problems.append(f"header {ours_header}, TraceLens {ref_header}")
    if KEYS.get(name, PARAMS) == PARAMS:
        keys = ["name"] + [c for c in ref_header if c.startswith("param: ")] + \
            [c for c in ["is_recompute"] if c in ref_header]
    else:
        keys = [k for k in KEYS[name] if k in ref_header]
    keys = [k for k in keys if k not in omitted]
    by_key = {tuple(norm(r.get(k, "")) for k in keys): r for r in ours}
    # Rows told apart only by an omitted column are compared by the C++ golden test.
    ambiguous = {k for k, n in collections.Counter(
        tuple(norm(r[k]) for k in keys) for r in ref).items() if n > 1}
    if len(ours) != len(ref):
        problems.append(f"{len(ours)} rows, TraceLens {len(ref)}")

    # Each TraceLens row's allowances, then its share's from the table's totals.
    allowances = []
    for r in ref:
        calls = next((int(float(r[c])) for c in CALLS if number(r.get(c)) is not None), 1)
        per_call = timestamps.per_call(r, categories)
        allowances.append({c: allowance(c, r, calls, per_call) for c in expected})
    if name == "gpu_timeline":
        timeline_allowances(ref, allowances, timestamps)
    cumulative = share_allowances(name, ref, allowances)

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
        differs = DIFFERS_IN.get(name, set())
        if name in DIFFERS_IN_ROWS and DIFFERS_IN_ROWS[name][0](r):
            differs = differs | DIFFERS_IN_ROWS[name][1]
        for column in expected:
            if column in differs or column not in r or column not in mine:
                continue
            if column == "Cumulative Percentage (%)" and cumulative:
                low, high, absolute = cumulative[index]
                x = number(mine[column])
                if x is None or not (low - 1e-4 * low - absolute - 1e-9 <= x <=
                                     high + 1e-4 * high + absolute + 1e-9):
                    problems.append(f"{key} {column}: {mine[column]}, TraceLens {r[column]} "
                                    f"(with the rows of equal time in any order: {low}..{high})")
                continue
            if not close(mine[column], r[column], column, allowances[index].get(column, 0.0)):
                problems.append(f"{key} {column}: {mine[column]}, TraceLens {r[column]}")
    return problems


def timeline_allowances(ref, allowances, timestamps):
    """A GPU timeline row: u per endpoint that enters it; its percent a share of total_time
    (of its gpu_pid and is_recompute). Split by recompute frames, a total is a sum of spans:
    every row is then bounded by all activities' endpoints."""
    split = any("is_recompute" in r for r in ref)
    endpoints = timestamps.timeline_endpoints
    group = lambda r: (r.get("gpu_pid"), r.get("is_recompute"))
    for r, a in zip(ref, allowances):
        count = endpoints.get("busy_time", 0) + 2 if split else endpoints.get(r["type"], 0)
        a["time ms"] = count * timestamps.ulp / 1000
    totals = {group(r): (float(r["time ms"]), a["time ms"]) for r, a in zip(ref, allowances)
              if r["type"] == "total_time"}
    for r, a in zip(ref, allowances):
        total, total_allowance = totals.get(group(r), (0.0, 0.0))
        if total > 0:
            a["percent"] = 100 * (a["time ms"] + float(r["time ms"]) / total * total_allowance) \
                / total


def share_allowances(name, ref, allowances):
    """Percentage (%) allowances from the table's total; per row, the range its running share
    may take with rows of equal time in any order, and that range's allowance."""
    column = SHARE_OF.get(name)
    if column is None or not ref or column not in ref[0]:
        return None
    values = [number(r[column]) or 0.0 for r in ref]
    total = sum(values)
    total_allowance = sum(a.get(column, 0.0) for a in allowances)
    if total <= 0:
        return None
    for value, a in zip(values, allowances):
        a["Percentage (%)"] = 100 * (a.get(column, 0.0) + value / total * total_allowance) / total
    # Tie groups: consecutive rows whose times may be equal.
    groups, start = [], 0
    for i in range(1, len(ref) + 1):
        if i == len(ref) or not within(values[i - 1], values[i], 0,
                                       allowances[i - 1].get(column, 0.0) +
                                       allowances[i].get(column, 0.0)):
            groups.append((start, i))
            start = i
    shares = [number(r.get("Percentage (%)")) or 0.0 for r in ref]
    running = [number(r.get("Cumulative Percentage (%)")) or 0.0 for r in ref]
    ranges, before, allowed = [None] * len(ref), 0.0, 0.0
    for start, end in groups:
        # At the group's end the running share is TraceLens's, whatever the order inside.
        after = running[end - 1]
        allowed += sum(a.get(column, 0.0) for a in allowances[start:end])
        absolute = 100 * (allowed + after / 100 * total_allowance) / total
        for i in range(start, end):
            ranges[i] = (before + shares[i] if end - start > 1 else after, after, absolute)
        before = after
    return ranges
