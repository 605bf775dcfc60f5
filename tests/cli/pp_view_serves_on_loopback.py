#!/usr/bin/env python3
"""`pp view` and `serve` listen on loopback only unless --host says otherwise (and then warn),
serve the view and its data, refuse paths, and stop on SIGTERM."""
import json
import urllib.error
import urllib.request

import harness


def listening_addresses(pid):
    """Local addresses of the process's listening TCP sockets, from /proc (IPv4, hex)."""
    inodes = set()
    import os
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    addresses.append(fields[1].split(":")[0])
    return addresses


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


t = harness.Test()
dump = t.corpus("pp_dumps/gpu8_layer64_gbs16/pp8")
proc, url = t.start_server("pp", "view", dump)
try:
    t.check(url.startswith("http://127.0.0.1:"), f"pp view announced {url}, not loopback")
    addresses = listening_addresses(proc.pid)
    t.check(addresses == ["0100007F"], f"listening on {addresses}, expected 127.0.0.1 only")
    status, page = get(url)
    t.check(status == 200 and 'id="data"' in page, f"GET / gave {status}")
    status, body = get(url + "api/0.json")
    view = json.loads(body)
    t.check(status == 200 and view["runs"][0]["pp"] == 8, "the view's data is not served")
    for path in ["../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "view/0/..%2f..%2fetc/passwd",
                 "etc/passwd", "view/7"]:
        status, body = get(url + path)
        t.check(status in (403, 404) and "root:" not in body, f"GET /{path} gave {status}")
finally:
    t.stop_server(proc)

# serve over a directory: one view per file it reads; a host beyond loopback is warned about.
proc, url = t.start_server("serve", t.corpus("pp_dumps"), "--host", "0.0.0.0")
try:
    status, body = get(url.replace("0.0.0.0", "127.0.0.1") + "api/index.json")
    names = sorted(v["name"] for v in json.loads(body)["views"])
    t.check(names == ["gpu8_layer64_gbs16/pp8", "gpu8_layer64_gbs16/pp8_vpp2"], f"views {names}")
finally:
    t.stop_server(proc)
    warning = proc.stderr.read()
    t.check("not loopback" in warning, f"no warning for --host 0.0.0.0: {warning!r}")

run = t.sextant("serve", "/nonexistent/trace.json", expect_status=1)
t.expect_output(run, r"/nonexistent/trace\.json: no such file or directory")
t.passed()
