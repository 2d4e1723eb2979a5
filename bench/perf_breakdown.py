#!/usr/bin/env python3
"""Inclusive time per request of the steps of our request path, from a perf profile.

    perf script -i perf.data > script.txt
    python3 bench/perf_breakdown.py script.txt BINARY REQUESTS_PER_SECOND [FREQ SECONDS]

Reads the call chains `perf script` prints (recorded with `-g`, frame
pointers), expands inlined frames of BINARY with addr2line (so steps the
compiler inlined into `post` still show up), and prints, for each step of the
MCP request path, the share of samples whose stack contains it and the
matching CPU µs per request. With FREQ (perf -F) and SECONDS (sampling time),
CPU per request = samples / FREQ / (rps × SECONDS); without them the server is
assumed 100% busy (true at c=32: 1e6 / rps). Standard library + binutils only.
"""
import collections
import os
import re
import subprocess
import sys

STEPS = [
    ("hyper: service call (everything below)", "TowerToHyperServiceFuture"),
    ("  Router clone per request (hyper-util clones the service)", "Router as core::clone::Clone"),
    ("  Router::call (prefix strip, URI re-parse, boxing)", "Router as tower_service"),
    ("  McpEndpoint::call / handle", "McpEndpoint>::call"),
    ("    HostPolicy::check", "HostPolicy::check"),
    ("    streamable_http::post", "streamable_http::post"),
    ("      is_json_body", "negotiate::is_json_body"),
    ("      read_limited (body collect)", "read_limited"),
    ("      envelope::parse_body", "envelope::parse_body"),
    ("      envelope::parse_message", "envelope::parse_message"),
    ("      negotiate::response_mode", "negotiate::response_mode"),
    ("      session_of (session store)", "streamable_http::session_of"),
    ("      dispatch::handle → call_tool", "mcp::call::call_tool"),
    ("        Executor::execute", "Executor::execute"),
    ("          ParamValidator::validate (jsonschema)", "ParamValidator::validate"),
    ("          generated invoke (bind, method, serialise)", "__rpc_invoke"),
    ("        call::success (CallToolResult)", "mcp::call::success"),
    ("      respond", "streamable_http::respond"),
    ("hyper: parse request head", "Http1Transaction>::parse"),
    ("hyper: encode response head", "Http1Transaction>::encode"),
    ("kernel: writev (send + loopback delivery)", "__GI___writev"),
    ("kernel: recv", "__libc_recv"),
    ("kernel: epoll_wait", "epoll_wait"),
    ("allocator: malloc", "malloc"),
    ("allocator: free", "_int_free"),
]


def samples(path):
    stack = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if stack:
                    yield stack
                stack = []
                continue
            if line[0] not in " \t":
                continue
            m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\(([^)]*)\)$", line)
            if m:
                stack.append((int(m.group(1), 16), m.group(2), m.group(3)))
    if stack:
        yield stack


def text_delta(binary):
    """perf prints file offsets; addr2line wants addresses: their difference in the text segment."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] == ["LOAD"] and "E" in parts[-2:-1][0]:
            return int(parts[2], 16) - int(parts[1], 16)
    return 0


def main():
    if len(sys.argv) not in (4, 6):
        sys.exit(__doc__)
    path, binary, rps = sys.argv[1], sys.argv[2], float(sys.argv[3])
    freq, secs = (float(sys.argv[4]), float(sys.argv[5])) if len(sys.argv) == 6 else (None, None)
    name = os.path.basename(binary)
    delta = text_delta(binary)
    all_samples = list(samples(path))
    addrs = sorted({a if i == 0 else a - 1 for st in all_samples for i, (a, _, d) in enumerate(st) if d.endswith(name)})
    chains = {}
    for start in range(0, len(addrs), 20000):
        batch = addrs[start:start + 20000]
        out = subprocess.run(["addr2line", "-e", binary, "-i", "-f", "-C", "-a"] + [hex(a + delta) for a in batch],
                             capture_output=True, text=True).stdout.split("\n")
        cur, i = None, 0
        while i < len(out):
            if out[i].startswith("0x"):
                cur = int(out[i], 16) - delta
                chains[cur] = []
                i += 1
            elif cur is not None and i + 1 < len(out):
                chains[cur].append(out[i])
                i += 2
            else:
                i += 1
    n = len(all_samples)
    kernel = 0
    hits = collections.Counter()
    for st in all_samples:
        if st[0][0] >= 0xFFFFFFFF00000000:
            kernel += 1
        names = []
        for i, (a, sym, d) in enumerate(st):
            if d.endswith(name):
                names.extend(chains.get(a if i == 0 else a - 1, [sym]))
            else:
                names.append(sym)
        for label, needle in STEPS:
            if any(needle in x for x in names):
                hits[label] += 1
    us = n / freq / (rps * secs) * 1e6 if freq else 1e6 / rps
    print(f"{n} samples, {rps:,.0f} req/s while profiling → {us:.2f} µs of server CPU per request; "
          f"kernel {100 * kernel / n:.0f}%, user space {100 * (n - kernel) / n:.0f}%")
    print()
    print("| step (inclusive) | share | µs / request |")
    print("|---|---:|---:|")
    for label, _ in STEPS:
        share = hits[label] / n
        indent = len(label) - len(label.lstrip(" "))
        print(f"| {chr(0xA0) * indent}{label.strip()} | {100 * share:.1f}% | {share * us:.2f} |")


if __name__ == "__main__":
    main()
