#!/usr/bin/env python3
"""bench/scale.py — issue 19's measurements beyond one call's throughput.

    bench/scale.py [PART ...]      PART: compile rustc startup list batch sessions soak stdio
                                   (default: all of them, in that order)

Each part prints its figures and the target they are held against:

* compile   the fixture crate `bench/scale` with 200 methods, debug build of the
            crate alone (its dependencies built), with the annotations and
            without them (SCALE_ANNOTATED=0): the ratio of the medians of 5 of
            the crate's unit in `cargo build --timings` (the whole `cargo build`
            beside it); once with methods that are not `async`, once with
            `async` ones (SCALE_ASYNC=1); and the same for rmcp's peer.
* rustc     the same builds as `compile` (not incremental), counted in rustc's
            instructions (callgrind around rustc for the fixture alone, through
            bench/rustc_callgrind.sh): figures that do not move with the machine,
            to compare builds by. The target is `compile`'s ratio in seconds; this
            one is higher (rustc's fixed costs take time, few instructions, and
            LLVM's threads add instructions, not time).
* startup   the release fixture with 1,000 annotated methods (SCALE_METHODS=1000):
            time from spawning it until it prints `listening on`, and until it
            has answered its first `tools/list`; median of 10.
* list      instructions per `tools/list` (callgrind, as bench/budget.py counts
            them) of the 1,000-tool group (first page, 50 tools) and of the
            10-tool group, and the bytes each copies.
* sessions  server memory per idle handshake-era session: the release catalog's
            resident memory before and after opening 10,000 sessions.
* soak      the release catalog's resident memory over 1,000,000 `tools/call`
            requests (wrk, c=32, ids over 5,000 distinct cache keys).
* batch     instructions of a `/rpc` batch of 100 `Catalog.get` calls against one
            such call alone (callgrind, as bench/budget.py counts them).
* stdio     100,000 `tools/call` lines through `catalog --stdio` against the bare
            line-echo loop of bench/baseline (`stdio_echo`) fed the same lines,
            and against rmcp's stdio transport serving the same tool and answer
            (bench/peers/rmcp_stdio; left out when it cannot be built); then the
            server's memory with a client that stops reading for 3 s and then
            reads slower than it writes (60,000 answers of 8 KB).

Builds what it needs (release catalog, release fixture with 1,000 methods, the
baseline) unless SKIP_BUILD=1. Needs valgrind (list) and wrk (soak).
"""

import glob
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import budget  # noqa: E402

CATALOG = os.path.join(ROOT, "target/release/catalog")
FIXTURE = os.path.join(ROOT, "target/release/scale")
ECHO = os.path.join(HERE, "baseline/target/release/stdio_echo")
RMCP_STDIO = os.path.join(HERE, "peers/rmcp_stdio/target/release/rmcp_stdio")
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "RPC_"))} | {"RUST_LOG": "warn"}


def cargo(*args, env=None):
    subprocess.run(["cargo", *args], cwd=ROOT, check=True, env=os.environ | (env or {}))


def build():
    if os.environ.get("SKIP_BUILD") == "1":
        return
    cargo("build", "--release", "-q", "-p", "catalog")
    cargo("build", "--release", "-q", "-p", "scale", env={"SCALE_METHODS": "1000", "SCALE_ANNOTATED": "1"})
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=os.path.join(HERE, "baseline"), check=True)
    # The rmcp peer needs rmcp's crates (fetched, or in cargo's cache offline).
    peer = subprocess.run(["cargo", "build", "--release", "-q"], cwd=os.path.join(HERE, "peers/rmcp_stdio"))
    if peer.returncode != 0:
        print("scale.py: the rmcp stdio peer did not build; stdio is measured without it", file=sys.stderr)


def resident(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("scale.py: no VmRSS")


def unit_seconds(cwd, crate):
    """How long cargo's last build (`--timings`, run in `cwd`) spent on the
    library unit of `crate`: rustc's time for the crate alone, as cargo
    reports it (the issue's measure; 10 ms resolution)."""
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(cwd, "target")
    reports = glob.glob(os.path.join(target, "cargo-timings/cargo-timing-*.html"))
    if not reports:
        raise SystemExit(f"scale.py: no cargo timing report under {target}/cargo-timings")
    with open(max(reports, key=os.path.getmtime)) as report:
        found = re.search(r"const UNIT_DATA = (\[.*?\]);", report.read(), re.S)
    if not found:
        raise SystemExit("scale.py: cargo's timing report has no UNIT_DATA")
    units = [u for u in json.loads(found.group(1)) if u["name"] == crate and not u.get("target", "").strip()]
    if len(units) != 1:
        raise SystemExit(f"scale.py: cargo's timing report has {len(units)} library units of {crate}")
    return units[0]["duration"]


def compile_times(build):
    """Medians of five debug builds each (`build(annotated)`, which returns
    the crate's unit time), plain then annotated in turn, and of the whole
    `cargo build` each took: ((annotated, plain) by the unit, (annotated,
    plain) whole), in seconds."""
    units = {"1": [], "0": []}
    whole = {"1": [], "0": []}
    for _ in range(5):
        for annotated in ("0", "1"):
            start = time.perf_counter()
            units[annotated].append(build(annotated))
            whole[annotated].append(time.perf_counter() - start)
    median = statistics.median
    return (median(units["1"]), median(units["0"])), (median(whole["1"]), median(whole["0"]))


def compile_time():
    """Debug build of the fixture's library with 200 methods, annotated or
    not, with methods that are not `async` and then `async` ones
    (SCALE_ASYNC=1); and of the same methods as rmcp's tools
    (bench/peers/rmcp_scale), against the same methods without rmcp, when
    rmcp's crates are at hand. The ratio is of the crate's own unit in
    `cargo build --timings` (rustc for the crate alone); the whole `cargo
    build` (cargo's own start-up and the build script's run added to both
    sides) is printed beside it."""
    for asyncness in ("0", "1"):
        kind = "async" if asyncness == "1" else "sync"
        def build(annotated):
            cargo("build", "-q", "-p", "scale", "--lib", "--timings",
                  env={"SCALE_METHODS": "200", "SCALE_ANNOTATED": annotated, "SCALE_ASYNC": asyncness})
            return unit_seconds(ROOT, "scale")
        (with_, without), (whole_with, whole_without) = compile_times(build)
        print(f"compile: 200 {kind} methods, debug, the crate's unit (cargo --timings): annotated {with_:.2f} s, "
              f"plain {without:.2f} s, ratio {with_ / without:.2f} (target <= 1.5); whole cargo build "
              f"{whole_with:.2f} s against {whole_without:.2f} s, {whole_with / whole_without:.2f}")
    default_fixture()

    peer = os.path.join(HERE, "peers/rmcp_scale")
    for asyncness in ("0", "1"):
        kind = "async" if asyncness == "1" else "sync"
        def peer_build(annotated):
            subprocess.run(["cargo", "build", "-q", "--lib", "--timings"], cwd=peer, check=True,
                           stderr=subprocess.DEVNULL, env=os.environ | {
                               "SCALE_METHODS": "200", "SCALE_ANNOTATED": annotated, "SCALE_ASYNC": asyncness})
            return unit_seconds(peer, "rmcp-scale-peer")
        try:
            peer_build("1")
        except subprocess.CalledProcessError:
            print("compile: rmcp's peer did not build (its crates are not at hand): left out")
            return
        (with_, without), (whole_with, whole_without) = compile_times(peer_build)
        print(f"compile: the same 200 {kind} methods as rmcp 3.11 tools, debug, the crate's unit: annotated "
              f"{with_:.2f} s, plain {without:.2f} s, ratio {with_ / without:.2f}; whole cargo build "
              f"{whole_with:.2f} s against {whole_without:.2f} s, {whole_with / whole_without:.2f}")


def rustc_instructions(annotated, asyncness):
    """Instructions rustc runs for the fixture's library with 200 methods
    (callgrind, through bench/rustc_callgrind.sh; non-incremental): the same
    on every run, where wall time moves with the machine."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "rustc.callgrind")
        os.utime(os.path.join(HERE, "scale/src/lib.rs"))
        cargo("build", "-q", "-p", "scale", "--lib", env={
            "SCALE_METHODS": "200", "SCALE_ANNOTATED": annotated, "SCALE_ASYNC": asyncness,
            "CARGO_INCREMENTAL": "0", "RUSTC_WRAPPER": os.path.join(HERE, "rustc_callgrind.sh"),
            "SCALE_CALLGRIND_OUT": out})
        with open(out) as profile:
            for line in profile:
                if line.startswith("totals:"):
                    return int(line.split()[1])
    raise SystemExit("scale.py: callgrind wrote no totals for the fixture")


def default_fixture():
    """Leaves the default fixture in place for `cargo test`."""
    cargo("build", "-q", "-p", "scale", "--lib", env={"SCALE_METHODS": "20", "SCALE_ANNOTATED": "1", "SCALE_ASYNC": "0"})


def rustc_counts():
    """rustc's instructions (annotated, plain) by kind, `sync` then `async`
    (the default fixture is left in place after)."""
    counts = {}
    for asyncness, kind in (("0", "sync"), ("1", "async")):
        counts[kind] = (rustc_instructions("1", asyncness), rustc_instructions("0", asyncness))
    default_fixture()
    return counts


def rustc_cost():
    """The compile-time ratio in rustc's instructions (the crate alone, as
    `compile` measures it in seconds)."""
    for kind, (with_, without) in rustc_counts().items():
        print(f"rustc: 200 {kind} methods, debug, crate alone: annotated {with_ / 1e9:.3f} G instructions, "
              f"plain {without / 1e9:.3f} G, ratio {with_ / without:.2f}")


def modern_list(cursor=None):
    params = {"_meta": budget.MODERN_META} | ({"cursor": cursor} if cursor else {})
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})


MODERN_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                  "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}


def startup():
    listening, answered = [], []
    for _ in range(10):
        start = time.perf_counter()
        proc = subprocess.Popen([FIXTURE, "big", "127.0.0.1:0"], stdout=subprocess.PIPE, env=CLEAN_ENV, text=True)
        try:
            line = proc.stdout.readline()
            listening.append(time.perf_counter() - start)
            if "listening on http://" not in line:
                raise SystemExit(f"scale.py: the fixture said {line!r}")
            addr = line.split("http://", 1)[1].strip()
            host, port = addr.rsplit(":", 1)
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("POST", "/mcp/v1", body=modern_list(), headers=MODERN_HEADERS)
            response = conn.getresponse()
            body = response.read()
            answered.append(time.perf_counter() - start)
            if response.status != 200 or b'"tools"' not in body:
                raise SystemExit(f"scale.py: tools/list answered {response.status} {body[:200]!r}")
            conn.close()
        finally:
            proc.terminate()
            proc.wait()
    tools = count_tools()
    print(f"startup: {tools} tools: listening after {1000 * statistics.median(listening):.1f} ms, first tools/list "
          f"answered after {1000 * statistics.median(answered):.1f} ms (median of 10; target <= 100 ms)")


def count_tools():
    """How many tools the fixture lists, page by page."""
    proc = subprocess.Popen([FIXTURE, "big", "127.0.0.1:0"], stdout=subprocess.PIPE, env=CLEAN_ENV, text=True)
    try:
        addr = proc.stdout.readline().split("http://", 1)[1].strip()
        host, port = addr.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        count, cursor = 0, None
        while True:
            conn.request("POST", "/mcp/v1", body=modern_list(cursor), headers=MODERN_HEADERS)
            result = json.loads(conn.getresponse().read())["result"]
            count += len(result["tools"])
            cursor = result.get("nextCursor")
            if not cursor:
                return count
    finally:
        proc.terminate()
        proc.wait()


def fixture_command(group):
    return lambda fixture, port: [fixture, group, f"127.0.0.1:{port}"]


def page_bytes(group):
    proc = subprocess.Popen([FIXTURE, group, "127.0.0.1:0"], stdout=subprocess.PIPE, env=CLEAN_ENV, text=True)
    try:
        addr = proc.stdout.readline().split("http://", 1)[1].strip()
        host, port = addr.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/mcp/v1", body=modern_list(), headers=MODERN_HEADERS)
        return len(conn.getresponse().read())
    finally:
        proc.terminate()
        proc.wait()


def list_cost():
    spec = ("/mcp/v1", "session", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {}, '"tools"')
    figures = {}
    with tempfile.TemporaryDirectory() as work:
        for group in ("big", "small"):
            figures[group] = budget.measure_kind(FIXTURE, None, work, fixture_command(group), spec).instructions
    big, small = figures["big"], figures["small"]
    big_bytes, small_bytes = page_bytes("big"), page_bytes("small")
    print(f"list: tools/list of 1,000 tools (first page, {big_bytes} bytes): {big} instructions; "
          f"of 10 tools ({small_bytes} bytes): {small}; ratio {big / small:.3f} "
          f"(target: within 10 % plus the copy of {big_bytes - small_bytes} more bytes)")


def batch():
    single = budget.KINDS["rpc single"]
    calls = [budget.rpc(i, "Catalog.get", {"id": 1 + i % 5}) for i in range(100)]
    hundred = ("/rpc", None, calls, {}, '"result"')
    with tempfile.TemporaryDirectory() as work:
        one = budget.measure_kind(CATALOG, None, work, spec=single).instructions
        many = budget.measure_kind(CATALOG, None, work, spec=hundred).instructions
    print(f"batch: /rpc single call {one} instructions, batch of 100 {many} ({many / one:.1f}x a single call; "
          f"{many / 100:.0f} per item; target <= 30x)")


def start_catalog(extra=()):
    port = budget.free_port()
    proc = subprocess.Popen([CATALOG, "--env", "prod", "--listen", f"127.0.0.1:{port}", *extra],
                            stdout=subprocess.DEVNULL, env=CLEAN_ENV)
    budget.wait_for(port, proc)
    return proc, port


HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def open_session(conn):
    status, session, _ = budget.post(conn, "/mcp/v1", json.dumps(budget.initialize("scale")), HEADERS)
    if status != 200 or not session:
        raise SystemExit(f"scale.py: initialize answered {status}")
    headers = HEADERS | {"Mcp-Session-Id": session, "MCP-Protocol-Version": budget.HANDSHAKE}
    status, _, _ = budget.post(conn, "/mcp/v1", json.dumps(budget.INITIALIZED), headers)
    if status != 202:
        raise SystemExit(f"scale.py: notifications/initialized answered {status}")
    return session


def sessions(count=10_000):
    proc, port = start_catalog()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(200):
            open_session(conn)
        before = resident(proc.pid)
        for _ in range(count):
            open_session(conn)
        after = resident(proc.pid)
        conn.close()
    finally:
        proc.terminate()
        proc.wait()
    print(f"sessions: {count} idle handshake-era sessions: {before / 2**20:.1f} -> {after / 2**20:.1f} MiB, "
          f"{(after - before) / count:.0f} bytes each (target <= 1024)")


SOAK_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.headers["Mcp-Session-Id"] = os.getenv("MCP_SESSION_ID")
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":%d}}}', n, n % 5000 + 1)
  return wrk.format(nil, nil, nil, body)
end
done = function(summary, latency, requests)
  io.write(string.format("JSON {\\"requests\\":%d,\\"non2xx\\":%d}\\n", summary.requests, summary.errors.status))
end
"""


def soak(total_requests=1_000_000):
    proc, port = start_catalog()
    samples = []
    done = 0
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(SOAK_LUA)
        script = f.name
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        session = open_session(conn)
        conn.close()
        env = os.environ | {"MCP_SESSION_ID": session}
        samples.append((0, resident(proc.pid)))
        while done < total_requests:
            out = subprocess.run(["wrk", "-t1", "-c32", "-d5s", "-s", script, f"http://127.0.0.1:{port}/mcp/v1"],
                                 capture_output=True, text=True, env=env, check=True).stdout
            line = next(l for l in out.splitlines() if l.startswith("JSON "))
            figures = json.loads(line[5:])
            if figures["non2xx"]:
                raise SystemExit(f"scale.py: soak: {figures['non2xx']} answers were not 2xx")
            done += figures["requests"]
            samples.append((done, resident(proc.pid)))
    finally:
        os.unlink(script)
        proc.terminate()
        proc.wait()
    warm = samples[min(2, len(samples) - 1)][1]
    peak = max(r for _, r in samples[2:]) if len(samples) > 2 else warm
    last = samples[-1][1]
    trail = ", ".join(f"{n // 1000}k: {r / 2**20:.1f}" for n, r in samples)
    print(f"soak: {done} requests; RSS (MiB) after {trail}")
    print(f"soak: after warm-up {warm / 2**20:.1f} MiB, peak {peak / 2**20:.1f}, last {last / 2**20:.1f} "
          f"({100 * (last - warm) / warm:+.1f} %; target: flat)")


def stdio_handshake(proc):
    """`initialize` (its answer read) and `notifications/initialized` on a
    stdio server's pipes."""
    proc.stdin.write((json.dumps(budget.initialize("scale")) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    proc.stdin.write((json.dumps(budget.INITIALIZED) + "\n").encode())
    proc.stdin.flush()


def stdio_rate(command, count, handshake):
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=CLEAN_ENV)
    try:
        if handshake:
            stdio_handshake(proc)
        lines = b"".join(
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":%d}}}\n'
            % (i + 1, i % 100 + 1) for i in range(count))

        def feed():
            proc.stdin.write(lines)
            proc.stdin.flush()

        start = time.perf_counter()
        writer = threading.Thread(target=feed)
        writer.start()
        for _ in range(count):
            line = proc.stdout.readline()
            if b'"structuredContent"' not in line:
                raise SystemExit(f"scale.py: stdio: unexpected line {line[:200]!r}")
        elapsed = time.perf_counter() - start
        writer.join()
        proc.stdin.close()
        proc.wait(30)
        return count / elapsed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def stdio(count=100_000):
    ours, echo, rmcp = [], [], []
    peer = os.path.exists(RMCP_STDIO)
    for _ in range(3):
        echo.append(stdio_rate([ECHO], count, False))
        ours.append(stdio_rate([CATALOG, "--stdio"], count, True))
        if peer:
            rmcp.append(stdio_rate([RMCP_STDIO], count, True))
    ours_rate, echo_rate = statistics.median(ours), statistics.median(echo)
    print(f"stdio: {count} tools/call lines: catalog --stdio {ours_rate:,.0f}/s, bare echo loop {echo_rate:,.0f}/s, "
          f"{100 * ours_rate / echo_rate:.0f} % (median of 3; target >= 80 %)")
    if peer:
        rmcp_rate = statistics.median(rmcp)
        print(f"stdio: rmcp's stdio transport {rmcp_rate:,.0f}/s: ours answers {ours_rate / rmcp_rate:.1f}x as many")
    stdio_slow_reader()


def stdio_slow_reader(count=60_000, size=8000):
    """`catalog --stdio` fed `count` calls answering `size`-byte texts by a
    client that reads nothing for 3 s, then reads slower than it writes: the
    server's memory must stay flat (its queue and buffers are bounded)."""
    proc = subprocess.Popen([CATALOG, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=CLEAN_ENV)
    try:
        stdio_handshake(proc)
        who = "w" * size

        def feed():
            for i in range(1, count + 1):
                proc.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ping",'
                                 b'"arguments":{"who":"%s"}}}\n' % (i, who.encode()))
            proc.stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        time.sleep(3)
        stalled = resident(proc.pid)
        for _ in range(count):
            if b"pong" not in proc.stdout.readline():
                raise SystemExit("scale.py: stdio: unexpected answer to ping")
        after = resident(proc.pid)
        writer.join()
        proc.stdin.close()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"stdio: a client reading nothing for 3 s, then slower than it writes ({count} answers of {size // 1000} KB): "
          f"server RSS {stalled / 2**20:.1f} MiB while stalled, {after / 2**20:.1f} MiB after (target: flat)")


PARTS = {"compile": compile_time, "rustc": rustc_cost, "startup": startup, "list": list_cost, "batch": batch, "sessions": sessions,
         "soak": soak, "stdio": stdio}


def main():
    parts = sys.argv[1:] or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise SystemExit(f"scale.py: unknown part {unknown[0]!r}\n{__doc__}")
    build()
    for part in parts:
        PARTS[part]()


if __name__ == "__main__":
    main()
