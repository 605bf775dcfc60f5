"""Hostile and careless inputs: sextant must answer each with exit status 0 or 1 (never a signal
or an internal error), within a few seconds and 1 GiB of memory, in at most 3 lines of
diagnostics that name the file, and must leave every input byte-identical.

Every input is generated here, in a temporary directory, from the descriptions of
docs/robustness.md; nothing is committed as a blob. Run one case with --case NAME, list them
with --list.
"""

import argparse
import csv
import gzip
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

SKIP_RETURN_CODE = 77
# The sanitizer build's shadow memory and slower code are not the program's: it raises both.
MAX_RSS_BYTES = int(os.environ.get("SEXTANT_HOSTILE_RSS_LIMIT_MB", "1024")) << 20
# A case may have a tighter memory limit of its own: the product's, checked in the optimised
# build only (the sanitizers' shadow memory and quarantine add a few hundred MiB to any case).
SANITIZED = MAX_RSS_BYTES != 1024 << 20
MAX_STDERR_LINES = 3
# CPU seconds a case may take; the sanitizer build runs several times slower. CPU time, not
# wall time, so that a machine busy with other work does not fail a case that did not spin; a
# hang is caught by the wall-clock deadline in run().
TIME_LIMIT_S = float(os.environ.get("SEXTANT_HOSTILE_TIME_LIMIT_S", "5"))

# A Kineto trace as the PyTorch profiler writes it, cut to one op, its launch and its kernel.
SMALL_TRACE = {
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
    "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
         "dur": 10, "args": {"External id": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 1, "dur": 2, "args": {"correlation": 5, "External id": 1}},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7,
         "ts": 5, "dur": 4, "args": {"correlation": 5, "device": 0, "stream": 7}},
    ],
}

# The bundled default example (a Primus experiment), with a micro-batch size of 1 that the
# cases below replace.
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
with open(os.path.join(REPO, "examples", "llama3.1_8B-BF16-pretrain.yaml")) as _example:
    MINIMAL_EXPERIMENT = _example.read().replace("micro_batch_size: 2", "micro_batch_size: 1")
assert "micro_batch_size: 1" in MINIMAL_EXPERIMENT


class Case:
    def __init__(self, name, argv, inputs=(), named=None, outputs_absent=(), protected=(),
                 expect=(0, 1), check=None, max_rss_mb=None):
        self.name = name
        self.argv = argv            # with {sextant} for the program
        self.inputs = list(inputs)  # files that must stay byte-identical
        # The file a diagnostic must name when the command fails (default: the first input).
        # A tuple: any one of its names will do (a flag may be reported by its config key).
        self.named = named if named is not None else (self.inputs[0] if self.inputs else None)
        self.outputs_absent = list(outputs_absent)  # must not exist after a failure
        self.protected = list(protected)  # other files that must stay byte-identical
        self.expect = expect
        self.check = check          # extra check(run) -> error message or None
        # Peak RSS allowed, where the input is small enough for the program to stay far below
        # the general limit.
        self.max_rss_bytes = (max_rss_mb << 20 if max_rss_mb and not SANITIZED
                              else MAX_RSS_BYTES)


class Result:
    def __init__(self, returncode, stdout, stderr, seconds, cpu_seconds, rss_bytes):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds          # wall clock
        self.cpu_seconds = cpu_seconds  # user + system
        self.rss_bytes = rss_bytes


def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    return path


def digest(path):
    if not os.path.lexists(path):
        return None
    if os.path.islink(path):
        return "link:" + os.readlink(path)
    if not os.path.isfile(path):
        return "special"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Starts the program from a fresh, small process and writes down its wait status, CPU seconds
# and peak RSS. Started from this one, which holds every generated input, the program would be
# charged this process's peak RSS: Linux keeps a process's peak across fork and exec.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{status} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}")
"""


def run(argv):
    """Runs argv with a wall-clock limit; returns its status, output, time and peak RSS."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as usage:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, usage.name] + argv, stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = start + TIME_LIMIT_S * 2 + 2  # a hang is reported, not waited out
        status, rusage = None, None
        while status is None:
            pid, raw, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status, rusage = raw, ru
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, 9)  # the launcher and the program
                _, raw, ru = os.wait4(proc.pid, 0)
                status, rusage = raw, ru
                break
            time.sleep(0.01)
        seconds = time.monotonic() - start
        cpu, rss = rusage.ru_utime + rusage.ru_stime, rusage.ru_maxrss
        reported = usage.read().split()
        if reported:  # the program's own, not the launcher's (killed at the deadline: those)
            status, cpu, rss = int(reported[0]), float(reported[1]), int(reported[2])
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Result(proc.returncode, out.read().decode("utf-8", "replace"),
                      err.read().decode("utf-8", "replace"), seconds, cpu, rss * 1024)


def judge(case, result, names):
    problems = []
    if result.returncode < 0:
        problems.append(f"killed by signal {-result.returncode}")
    elif result.returncode not in case.expect:
        problems.append(f"exit status {result.returncode}, expected one of {case.expect}")
    if result.cpu_seconds > TIME_LIMIT_S:
        problems.append(f"took {result.cpu_seconds:.1f} s of CPU (limit {TIME_LIMIT_S:.0f} s)")
    if result.rss_bytes > case.max_rss_bytes:
        problems.append(f"peak RSS {result.rss_bytes / 2**20:.0f} MiB "
                        f"(limit {case.max_rss_bytes >> 20} MiB)")
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    if result.returncode == 1:
        if len(lines) > MAX_STDERR_LINES:
            problems.append(f"{len(lines)} lines on stderr (at most {MAX_STDERR_LINES})")
        longest = max((len(l) for l in lines), default=0)
        if longest > 600:
            problems.append(f"a diagnostic line of {longest} characters")
        names_wanted = case.named if isinstance(case.named, tuple) else (case.named,)
        wanted = [os.path.basename(n) for n in names_wanted if n]
        if wanted and not any(w in result.stderr for w in wanted):
            problems.append(f"the diagnostic does not name {' or '.join(wanted)}")
        for path in case.outputs_absent:
            if os.path.lexists(path) and digest(path) == names.get(path, "absent"):
                continue
            if os.path.lexists(path) and path not in names:
                problems.append(f"a failed run left {os.path.basename(path)} behind")
    for path, before in names.items():
        if digest(path) != before:
            problems.append(f"{os.path.basename(path)} was changed")
    if case.check:
        message = case.check(result)
        if message:
            problems.append(message)
    return problems


# The protobuf wire format, for the XPlane profiles below.
def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out) + bytes([n])


def delimited(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def number(field, n):
    return varint(field << 3) + varint(n)


def packed(field, values):
    return delimited(field, b"".join(varint(v) for v in values))


def metadata_entry(field, key, value):  # a map<int64, ...> entry of XPlane field 4 or 5
    return delimited(field, number(1, key) + delimited(2, value))


def xplane_device_profile(events, ops=200):
    """An XPlane profile of one GPU that ran `events` kernels of `ops` XLA ops of one module,
    each launched by a host event with its correlation id, with the module's HLO: what a long
    JAX profile holds, at about 53 bytes per device event."""
    shape = delimited(3, number(2, 16) + packed(3, [8, 1024, 4096])
                      + delimited(5, packed(1, [2, 1, 0])))
    instructions = delimited(2, delimited(1, b"param.0") + delimited(2, b"parameter") + shape
                             + number(35, 1))
    for i in range(ops):
        instructions += delimited(2, delimited(1, b"fusion.%d" % i) + delimited(2, b"fusion")
                                  + shape + delimited(7, delimited(2, b"jit(step)/dot.%d" % i))
                                  + number(35, i + 2) + packed(36, [1]))
    hlo = delimited(1, delimited(1, b"jit_step")
                    + delimited(3, delimited(1, b"main") + instructions + number(6, 1)))
    host = delimited(1, delimited(2, b"/host:metadata")
                     + metadata_entry(4, 1, number(1, 1) + delimited(2, b"jit_step")
                                      + delimited(5, number(1, 1) + delimited(6, hlo)))
                     + metadata_entry(5, 1, number(1, 1) + delimited(2, b"Hlo Proto")))
    # Device events: a kernel name, an offset, a duration and three stats (its module and op by
    # reference, as XLA writes them, and its correlation id); host events: a launch each.
    module_stat = delimited(4, number(1, 1) + number(7, 4))
    op_stats = [delimited(4, number(1, 2) + number(7, 5 + i)) for i in range(ops)]
    names = [number(1, 1 + i) for i in range(ops)]
    launch_key, kernel_key = varint(4 << 3 | 2), varint(4 << 3 | 2)
    launches, kernels = [], []
    for e in range(events):
        correlation = delimited(4, number(1, 3) + number(4, e + 1))
        body = number(1, 1) + number(2, e * 3000) + number(3, 2000) + correlation
        launches.append(launch_key + varint(len(body)) + body)
        body = (names[e % ops] + number(2, 10_000 + e * 3000) + number(3, 2500) + module_stat
                + op_stats[e % ops] + correlation)
        kernels.append(kernel_key + varint(len(body)) + body)
    cpu = delimited(1, delimited(2, b"/host:CPU")
                    + delimited(3, delimited(2, b"python") + number(3, 1000) + b"".join(launches))
                    + metadata_entry(4, 1, number(1, 1) + delimited(2, b"cudaLaunchKernel"))
                    + metadata_entry(5, 3, number(1, 3) + delimited(2, b"correlation_id")))
    gpu = (delimited(2, b"/device:GPU:0")
           + delimited(3, number(1, 7) + delimited(2, b"Stream #7(Kernel)") + number(3, 1000)
                       + b"".join(kernels)))
    for i in range(ops):
        gpu += metadata_entry(4, 1 + i, number(1, 1 + i) + delimited(2, b"fusion_kernel_%d" % i))
    for key, name in [(1, b"hlo_module"), (2, b"hlo_op"), (3, b"correlation_id"),
                      (4, b"jit_step")]:
        gpu += metadata_entry(5, key, number(1, key) + delimited(2, name))
    for i in range(ops):
        gpu += metadata_entry(5, 5 + i, number(1, 5 + i) + delimited(2, b"fusion.%d" % i))
    return host + cpu + delimited(1, gpu)


def build_cases(d, corpus):
    """Every case, its inputs generated under directory d."""
    p = lambda name: os.path.join(d, name)
    cases = []
    trace = write(p("trace.json"), json.dumps(SMALL_TRACE))
    other = write(p("other.json"), json.dumps(SMALL_TRACE))
    experiment = write(p("exp.yaml"), MINIMAL_EXPERIMENT)

    # --- trace merge on input simdjson rejects at its first pass ---------------------------
    for name, data in [("empty", b""), ("invalid_utf8", b'{"traceEvents":[{"name":"\xff\xfe"}]}'),
                       ("unterminated_string", b'{"traceEvents":[{"name":"abc')]:
        bad = write(p(f"merge_{name}.json"), data)
        out = p(f"merge_{name}_out.json")
        cases.append(Case(f"merge_{name}", ["{sextant}", "trace", "merge", bad, "-o", out],
                          inputs=[bad], outputs_absent=[out], expect=(1,)))
        cases.append(Case(f"report_{name}", ["{sextant}", "trace", "report", bad],
                          inputs=[bad], expect=(1,)))

    # --- an event array that closes early must not be merged silently ----------------------
    events = ",".join(json.dumps(e) for e in SMALL_TRACE["traceEvents"])
    early = write(p("early_close.json"),
                  '{"traceEvents":[' + events + '],' + events + "]}")
    out = p("early_close_out.json")

    def says_something(result):
        if result.returncode == 0 and "early_close.json" not in result.stderr:
            return "merged with exit 0 and no warning naming the file"
        return None
    cases.append(Case("merge_early_close", ["{sextant}", "trace", "merge", early, "-o", out],
                      inputs=[early], check=says_something))

    # --- outputs that name an input, by any path -----------------------------------------------
    hard = p("trace_hardlink.json")
    os.link(trace, hard)
    soft = p("trace_symlink.json")
    os.symlink(trace, soft)
    for label, target in [("relative", os.path.join(".", os.path.relpath(trace))),
                          ("absolute", os.path.abspath(trace)), ("symlink", soft),
                          ("hardlink", hard)]:
        cases.append(Case(f"merge_onto_input_{label}",
                          ["{sextant}", "trace", "merge", trace, other, "-o", target],
                          inputs=[trace, other], named=trace, expect=(1,)))
    cases.append(Case("report_html_onto_input",
                      ["{sextant}", "trace", "report", trace, "--html", trace],
                      inputs=[trace], expect=(1,)))
    cases.append(Case("report_xlsx_onto_input",
                      ["{sextant}", "trace", "report", trace, "--xlsx", trace],
                      inputs=[trace], expect=(1,)))
    cases.append(Case("diff_html_onto_input",
                      ["{sextant}", "trace", "diff", trace, other, "--html", other],
                      inputs=[trace, other], named=other, expect=(1,)))
    snapshot_src = os.path.join(REPO, "tests", "data", "snapshot", "state_only_p0.pickle")
    snapshot = write(p("snap.pickle"), open(snapshot_src, "rb").read())
    cases.append(Case("snapshot_html_onto_input",
                      ["{sextant}", "memory", "snapshot", snapshot, "--html", snapshot],
                      inputs=[snapshot], expect=(1,)))
    victim_config = write(p("exp_chrome.yaml"), MINIMAL_EXPERIMENT)  # its own copy
    cases.append(Case("chrome_trace_onto_config",
                      ["{sextant}", "projection", "performance", "--config", victim_config,
                       "--chrome-trace", victim_config], inputs=[victim_config], expect=(1,)))

    # --- --export-config onto any file the job reads, not only --config ------------------------
    gemms = write(p("gemms.csv"), "m,n,k,dtype,time_us\n4096,4096,4096,bf16,300\n")
    base = write(p("exp_base.yaml"), MINIMAL_EXPERIMENT)
    child = write(p("exp_child.yaml"), "extends: exp_base.yaml\n")
    # Each case its own copy of the trace: a case that overwrote it would hide the next one.
    trace_a = write(p("trace_for_export_a.json"), json.dumps(SMALL_TRACE))
    trace_b = write(p("trace_for_export_b.json"), json.dumps(SMALL_TRACE))
    for label, extra, victim in [
            ("gemm_timings", ["--gemm-timings", gemms], gemms),
            ("trace", ["--profiling-mode", "trace", "--trace", trace_a], trace_a),
            ("compare", ["--compare", trace_b], trace_b)]:
        cases.append(Case(f"export_config_onto_{label}",
                          ["{sextant}", "projection", "performance", "--config", experiment] +
                          extra + ["--export-config", victim],
                          inputs=[victim, experiment], named=victim, expect=(1,)))
    cases.append(Case("export_config_onto_the_file_it_extends",
                      ["{sextant}", "projection", "memory", "--config", child,
                       "--export-config", base],
                      inputs=[base, child], named="exp_base.yaml", expect=(1,)))
    # A job that fails leaves no directory behind for the export it never wrote.
    cases.append(Case("export_config_of_a_failed_job_makes_no_directory",
                      ["{sextant}", "projection", "memory", "--config", experiment,
                       "--num_layers", "-1", "--export-config", p("made/by/export.yaml")],
                      inputs=[experiment], named=("num_layers",), outputs_absent=[p("made")],
                      expect=(1,)))
    # A file marked read-only is not replaced by the rename that writes outputs.
    read_only = write(p("read_only.html"), "precious\n")
    os.chmod(read_only, 0o444)
    cases.append(Case("report_html_onto_a_read_only_file",
                      ["{sextant}", "trace", "report", trace, "--html", read_only],
                      inputs=[trace], named=read_only, protected=[read_only], expect=(1,)))

    # --- an output path that is a symbolic link: its target is never written ---------------
    victim = write(p("victim.txt"), "do not overwrite\n")
    link_out = p("report_link.html")
    os.symlink(victim, link_out)
    cases.append(Case("report_html_through_symlink",
                      ["{sextant}", "trace", "report", trace, "--html", link_out],
                      inputs=[trace], protected=[victim]))

    # --- decompression bombs and lying frame headers -------------------------------------------
    # A zstd frame whose header claims 1 TiB of content and holds none (16 bytes): magic,
    # descriptor 0xE0 (8-byte content size, single segment), the size, an empty last raw block.
    zst = write(p("claims_1tib.json.zst"),
                b"\x28\xb5\x2f\xfd" + b"\xe0" + struct.pack("<Q", 1 << 40) + b"\x01\x00\x00")
    cases.append(Case("zstd_header_claims_1tib", ["{sextant}", "trace", "report", zst],
                      inputs=[zst], expect=(1,)))
    bomb = p("bomb.json.gz")
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents":[')
        zeros = b" " * (1 << 20)
        for _ in range(2048):  # 2 GiB of blanks in ~2 MB
            f.write(zeros)
    cases.append(Case("gzip_bomb", ["{sextant}", "trace", "report", bomb], inputs=[bomb],
                      expect=(1,)))

    # --- XPlane profiles (protobuf) whose messages cost far more memory than their bytes --------
    def plane(name, events):  # XSpace.planes: a name and one line (XPlane field 3) of events
        line = varint(3 << 3) + varint(1000) + events
        return delimited(1, delimited(2, name.encode()) + delimited(3, line))

    event = delimited(4, varint(1 << 3) + varint(1))  # XLine.events: metadata id 1, no times
    empty_events = write(p("empty_events.xplane.pb"),
                         plane("/device:GPU:0", delimited(4, b"") * 1_000_000))
    cases.append(Case("xplane_million_empty_gpu_events",
                      ["{sextant}", "trace", "report", empty_events], inputs=[empty_events],
                      expect=(1,)))
    many_planes = write(p("many_planes.xplane.pb"),
                        b"".join(plane(f"/device:GPU:{i}", event) for i in range(10_000)))
    cases.append(Case("xplane_10000_gpu_planes", ["{sextant}", "trace", "report", many_planes],
                      inputs=[many_planes], expect=(1,)))
    empty_stats = write(p("empty_stats.xplane.pb"),
                        plane("/host:CPU", delimited(4, delimited(4, b"") * 2_500_000)))
    cases.append(Case("xplane_host_event_of_2_5m_empty_stats",
                      ["{sextant}", "trace", "report", empty_stats], inputs=[empty_stats],
                      expect=(1,)))
    gpus_1024 = write(p("gpus_1024.xplane.pb"),
                      b"".join(plane(f"/device:GPU:{i}", event) for i in range(1024)))

    def warnings_counted(result):
        warned = [l for l in result.stderr.splitlines() if "warning" in l]
        return f"{len(warned)} warning lines for 1024 GPUs" if len(warned) > 12 else None
    cases.append(Case("xplane_1024_gpus_warned_once_each_kind",
                      ["{sextant}", "trace", "report", gpus_1024], inputs=[gpus_1024],
                      check=warnings_counted))

    # An "Hlo Proto" of 0.1 MB whose instruction names a 4,000-dimension shape 100,000 times:
    # printed as XLA prints it, 3.2 GB of operand text. Its module is left out, in one line.
    big_shape = delimited(3, number(2, 11) + packed(3, [1_000_000] * 4000)
                          + delimited(5, packed(1, [0] * 4000)))
    param = delimited(2, delimited(1, b"param.1") + big_shape + number(35, 1))
    fusion = delimited(2, delimited(1, b"fusion") + number(35, 2) + packed(36, [1] * 100_000)
                       + delimited(3, number(2, 11) + packed(3, [1]) + delimited(5, packed(1, [0]))))
    hlo = delimited(1, delimited(1, b"jit_bomb") + delimited(3, param + fusion + number(6, 99)))
    host = delimited(1, delimited(2, b"/host:metadata")
                     + metadata_entry(4, 1, number(1, 1) + delimited(2, b"jit_bomb")
                                      + delimited(5, number(1, 1) + delimited(6, hlo)))
                     + metadata_entry(5, 1, number(1, 1) + delimited(2, b"Hlo Proto")))
    kernel = delimited(4, number(1, 1) + number(3, 1000)
                       + delimited(4, number(1, 1) + delimited(5, b"jit_bomb"))
                       + delimited(4, number(1, 2) + delimited(5, b"fusion")))
    gpu = delimited(1, delimited(2, b"/device:GPU:0")
                    + delimited(3, delimited(2, b"Stream #7(Kernel)") + kernel)
                    + metadata_entry(4, 1, number(1, 1) + delimited(2, b"fusion_kernel"))
                    + metadata_entry(5, 1, number(1, 1) + delimited(2, b"hlo_module"))
                    + metadata_entry(5, 2, number(1, 2) + delimited(2, b"hlo_op")))
    hlo_bomb = write(p("hlo_bomb.xplane.pb"), host + gpu)

    def module_left_out(result):
        said = [l for l in result.stderr.splitlines()
                if "hlo_bomb.xplane.pb" in l and 'XLA module "jit_bomb"' in l
                and "left out" in l]
        return None if said else "no warning naming the file and the module left out"
    cases.append(Case("xplane_hlo_operand_shape_repeated_100000_times",
                      ["{sextant}", "trace", "report", hlo_bomb], inputs=[hlo_bomb],
                      check=module_left_out))

    # An "Hlo Proto" of 5 million empty instructions (10 MB): protobuf would make them 0.6 GB
    # of objects. It is refused on its wire format, in one line naming the file, the byte and
    # the instruction past the budget; the kernels are read.
    many = delimited(1, delimited(1, b"jit_many") + delimited(3, delimited(2, b"") * 5_000_000))
    many_host = delimited(1, delimited(2, b"/host:metadata")
                          + metadata_entry(4, 1, number(1, 1) + delimited(2, b"jit_many")
                                           + delimited(5, number(1, 1) + delimited(6, many)))
                          + metadata_entry(5, 1, number(1, 1) + delimited(2, b"Hlo Proto")))
    hlo_many = write(p("hlo_many.xplane.pb"), many_host + gpu.replace(b"jit_bomb", b"jit_many"))

    def instructions_refused(result):
        said = [l for l in result.stderr.splitlines()
                if "hlo_many.xplane.pb at byte " in l and ".instructions[" in l
                and 'XLA module "jit_many"' in l and "protobuf messages" in l]
        return None if said else "no warning locating the instruction past the HLO budget"
    cases.append(Case("xplane_hlo_of_5_million_empty_instructions",
                      ["{sextant}", "trace", "report", hlo_many], inputs=[hlo_many],
                      expect=(0,), check=instructions_refused, max_rss_mb=150))

    # Profiles of one GPU that ran 100,000 and 50,000 kernels (5 and 2.6 MB): each output holds
    # what it writes and no more. Before, the console built the xla_activities table it never
    # shows (146 MiB), --json a tree of every row (242 MiB), --format tracelens two copies of the
    # table (272 MiB), --xlsx every cell in the workbook's memory (171 MiB; 382 MiB for
    # TraceLens's sheets).
    device_100k = write(p("device_100k.xplane.pb"), xplane_device_profile(100_000))
    cases.append(Case("xplane_100k_device_events_console",
                      ["{sextant}", "trace", "report", device_100k], inputs=[device_100k],
                      expect=(0,), max_rss_mb=125))
    device = write(p("device_50k.xplane.pb"), xplane_device_profile(50_000))
    for label, extra, limit in [("json", ["--json"], 150),
                                ("tracelens_csv", ["--format", "tracelens", "--csv",
                                                   p("device_50k_tracelens")], 225),
                                ("xlsx", ["--xlsx", p("device_50k.xlsx")], 125),
                                ("tracelens_xlsx", ["--format", "tracelens", "--xlsx",
                                                    p("device_50k_tracelens.xlsx")], 275)]:
        cases.append(Case(f"xplane_50k_device_events_{label}",
                          ["{sextant}", "trace", "report", device] + extra, inputs=[device],
                          expect=(0,), max_rss_mb=limit))

    # --- a truncated trace alone: every warning names the file -----------------------------
    whole = gzip.compress(json.dumps({"traceEvents": SMALL_TRACE["traceEvents"] * 200}).encode())
    cut_gz = write(p("cut_alone.json.gz"), whole[: len(whole) - 12])

    def every_warning_names_the_file(result):
        unnamed = [l for l in result.stderr.splitlines()
                   if "warning:" in l and "cut_alone.json.gz" not in l]
        return f"a warning without the file's name: {unnamed[0]}" if unnamed else None
    cases.append(Case("truncated_gzip_alone", ["{sextant}", "trace", "report", cut_gz],
                      inputs=[cut_gz], check=every_warning_names_the_file))

    # --- special files as inputs -----------------------------------------------------------------
    fifo = p("fifo.yaml")
    os.mkfifo(fifo)
    for label, argv in [
            ("config", ["projection", "memory", "--config", "{input}"]),
            ("hardware_config", ["projection", "memory", "--hardware-config", "{input}"]),
            ("validate", ["validate", "{input}"]),
            ("gemm_timings", ["projection", "performance", "--gemm-timings", "{input}"]),
            ("calibrate", ["calibrate", "--gpu-arch", "mi300x", "{input}"]),
            ("trace", ["trace", "report", "{input}"]),
            ("snapshot", ["memory", "snapshot", "{input}"])]:
        for special, path in [("dev_zero", "/dev/zero"), ("fifo", fifo), ("directory", d)]:
            cases.append(Case(f"{special}_as_{label}",
                              ["{sextant}"] + [a.replace("{input}", path) for a in argv],
                              named=path, expect=(1,)))
    extends_zero = write(p("extends_zero.yaml"), "extends: /dev/zero\n" + MINIMAL_EXPERIMENT)
    cases.append(Case("dev_zero_in_extends",
                      ["{sextant}", "projection", "memory", "--config", extends_zero],
                      inputs=[extends_zero], named="/dev/zero", expect=(1,)))

    # --- work that grows faster than the input -------------------------------------------------
    for i in range(40):
        nxt = f"chain{i + 1}.yaml"
        write(p(f"chain{i}.yaml"), f"extends: [{nxt}, {nxt}]\n")
    write(p("chain40.yaml"), MINIMAL_EXPERIMENT)
    cases.append(Case("extends_doubling_dag",
                      ["{sextant}", "projection", "memory", "--config", p("chain0.yaml")],
                      inputs=[p("chain0.yaml")]))
    overrides = []
    for _ in range(50000):
        overrides += ["--num_layers", "32"]
    # A key given twice is refused at its second value, however many follow.
    cases.append(Case("fifty_thousand_overrides",
                      ["{sextant}", "projection", "memory", "--config", experiment] + overrides,
                      inputs=[experiment], named=("--num_layers",), expect=(1,)))
    distinct = []
    for i in range(50000):
        distinct += [f"--key_{i}", "1"]
    cases.append(Case("fifty_thousand_distinct_overrides",
                      ["{sextant}", "projection", "memory", "--config", experiment] + distinct,
                      inputs=[experiment], named=("--key_0",), expect=(1,)))
    toml_keys = write(p("many_keys.toml"),
                      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[extra]\n" +
                      "".join(f"k{i} = {i}\n" for i in range(100000)))
    cases.append(Case("toml_table_100k_keys",
                      ["{sextant}", "projection", "memory", "--config", toml_keys],
                      inputs=[toml_keys]))
    toml_deep = write(p("deep.toml"), "[" + "a." * 100000 + "a]\nx = 1\n")
    cases.append(Case("toml_header_100k_deep",
                      ["{sextant}", "projection", "memory", "--config", toml_deep],
                      inputs=[toml_deep], expect=(1,)))
    yaml_deep = write(p("deep.yaml"), "modules: " + "[" * 100000 + "\n")
    cases.append(Case("yaml_100k_deep",
                      ["{sextant}", "projection", "memory", "--config", yaml_deep],
                      inputs=[yaml_deep], expect=(1,)))
    long_scalar = write(p("long_scalar.yaml"),
                        MINIMAL_EXPERIMENT.replace("micro_batch_size: 1",
                                                   "micro_batch_size: " + "9" * (50 << 20)))
    cases.append(Case("fifty_megabyte_scalar",
                      ["{sextant}", "projection", "memory", "--config", long_scalar],
                      inputs=[long_scalar], expect=(1,)))
    # Below the size limit: the message quotes the value cut short, on one line.
    scalar = write(p("scalar_4mb.yaml"),
                   MINIMAL_EXPERIMENT.replace("micro_batch_size: 1",
                                              "micro_batch_size: " + "9" * (4 << 20)))
    cases.append(Case("four_megabyte_scalar",
                      ["{sextant}", "projection", "memory", "--config", scalar],
                      inputs=[scalar], expect=(1,)))

    # --- numbers that overflow what is derived from them ---------------------------------------
    huge = str(1 << 62)
    for label, flag in [("micro_batch_size", "--micro-batch-size"),
                        ("seq_length", "--seq_length"), ("hidden_size", "--hidden_size"),
                        ("global_batch_size", "--global-batch-size")]:
        cases.append(Case(f"huge_{label}_flag",
                          ["{sextant}", "projection", "both", "--config", experiment, flag, huge],
                          inputs=[experiment], named=(flag, label), expect=(1,)))
    yaml_huge = write(p("huge_mbs.yaml"),
                      MINIMAL_EXPERIMENT.replace("micro_batch_size: 1", "micro_batch_size: " + huge))
    cases.append(Case("huge_micro_batch_size_yaml",
                      ["{sextant}", "projection", "both", "--config", yaml_huge],
                      inputs=[yaml_huge], expect=(1,)))
    # A batch whose pipeline would take minutes and gigabytes to simulate: refused at once.
    for schedule in ("1f1b", "zb-h2"):
        cases.append(Case(f"million_micro_batches_{schedule}",
                          ["{sextant}", "projection", "both", "--config", experiment,
                           "--global-batch-size", "1000000", "--pipeline_model_parallel_size", "8",
                           "--pipeline-schedule-algorithm", schedule],
                          inputs=[experiment], named=("global_batch_size",), expect=(1,)))
    cases.append(Case("negative_global_batch_size",
                      ["{sextant}", "projection", "memory", "--config", experiment,
                       "--global-batch-size", "-8"], inputs=[experiment],
                      named=("--global-batch-size", "global_batch_size"), expect=(1,)))
    if corpus and os.path.isfile(os.path.join(corpus, "validation/published_runs.csv")):
        with open(os.path.join(corpus, "validation/published_runs.csv"), newline="") as f:
            rows = list(csv.reader(f))
        header = rows[0]
        row = next(r for r in rows[1:] if r[0] == "narayanan21-01")
        row[header.index("global_batch")] = huge
        table = p("huge_row.csv")
        with open(table, "w", newline="") as f:
            csv.writer(f).writerows([header, row])
        cases.append(Case("huge_global_batch_in_validate_row", ["{sextant}", "validate", table],
                          inputs=[table]))

    # --- a pickle whose memo makes a small file a large object graph ---------------------------
    fanout = write(p("fanout.pickle"), pickle_fanout())
    cases.append(Case("pickle_memo_fanout", ["{sextant}", "memory", "snapshot", fanout],
                      inputs=[fanout]))
    return cases


def pickle_fanout():
    """A snapshot-shaped pickle (protocol 2) whose one segment, of 2000 blocks, is referenced
    1000 times through the memo: ~90 KB of file for a 2-million-block object graph."""
    def text(t):
        return b"X" + struct.pack("<I", len(t)) + t.encode()

    def integer(n):
        return b"J" + struct.pack("<i", n)

    block = (b"}(" + text("size") + integer(512) + text("state") + text("active_allocated") +
             b"u")                               # {'size': 512, 'state': 'active_allocated'}
    out = bytearray(b"\x80\x02")                # PROTO 2
    out += b"}("                                 # the snapshot dict, MARK
    out += text("segments") + b"]("              # 'segments': [ MARK
    out += b"}q\x01("                            # the segment, memo 1, MARK
    out += text("blocks") + b"](" + block * 2000 + b"e"  # 'blocks': [...] APPENDS
    out += text("total_size") + integer(1 << 20) + text("address") + integer(1 << 30)
    out += b"u"                                  # SETITEMS into the segment
    out += b"h\x01" * 999                        # BINGET 1, 999 more references
    out += b"e"                                  # APPENDS the 1000 segments
    out += b"u"                                  # SETITEMS into the snapshot
    out += b"."                                  # STOP
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sextant", required=True)
    parser.add_argument("--corpus", default="")
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    corpus = os.environ.get("SEXTANT_CORPUS_DIR") or args.corpus
    with tempfile.TemporaryDirectory(prefix="sextant_hostile_") as d:
        cases = build_cases(d, corpus)
        if args.list:
            for c in cases:
                print(c.name)
            return 0
        chosen = [c for c in cases if not args.case or c.name in args.case]
        failures = 0
        for case in chosen:
            watched = {path: digest(path) for path in case.inputs + case.protected}
            argv = [a.replace("{sextant}", args.sextant) for a in case.argv]
            result = run(argv)
            problems = judge(case, result, watched)
            first = result.stderr.strip().splitlines()[:1]
            summary = f"exit {result.returncode}, {result.seconds:.2f} s, " \
                      f"{result.cpu_seconds:.2f} s CPU, {result.rss_bytes / 2**20:.0f} MiB"
            if problems:
                failures += 1
                print(f"FAIL {case.name}: {'; '.join(problems)} ({summary})")
                print(f"     stderr: {(first[0] if first else '')[:300]}")
            else:
                print(f"ok   {case.name} ({summary}) {(first[0] if first else '')[:160]}")
        print(f"{len(chosen) - failures} of {len(chosen)} hostile inputs handled")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
