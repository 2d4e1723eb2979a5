#!/usr/bin/env python3
"""Where a request's memory copies come from: memmove calls per request, their
sizes, and the code that made them (inlined frames expanded).

    perf script -i copies.data > copies.txt
    python3 bench/copies.py copies.txt BINARY [TOP]

Reads `perf script` output of a uprobe on libc's memmove that records its
length (`perf probe -x LIBC 'mm=MEMMOVE len=%dx:u64'`, recorded with
`--call-graph dwarf`) beside the server's `writev` calls (one per response):
see bench/copies.sh. For each call site in BINARY: the copies per request,
their average size and share of the bytes copied.
Standard library + binutils only.
"""
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_breakdown import text_delta  # noqa: E402


def events(path):
    """(length, stack) per probe hit, with length None for a `writev` (a
    response); a stack is a list of (address, object)."""
    length, stack = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if line[:1] not in ("", " ", "\t", "\n"):
                if length is not None:
                    yield length, stack
                m = re.search(r"len=(\d+)", line)
                length, stack = (int(m.group(1)) if m else -1), []
                continue
            m = re.match(r"\s*([0-9a-f]+)\s+.*?\s+\(([^)]*)\)$", line)
            if m and length is not None:
                stack.append((int(m.group(1), 16), m.group(2)))
    if length is not None:
        yield length, stack


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    path, binary = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    name = os.path.basename(binary)
    size, count = collections.Counter(), collections.Counter()
    total_bytes = total_copies = requests = 0
    for length, stack in events(path):
        if length < 0:
            requests += 1
            continue
        total_bytes += length
        total_copies += 1
        caller = next((addr for addr, obj in stack[1:] if os.path.basename(obj) == name), None)
        if caller is not None:
            size[caller] += length
            count[caller] += 1
    if not requests or not total_copies:
        raise SystemExit("copies.py: no responses or no copies in the recording")
    print(f"{requests} responses; {total_copies / requests:.1f} copies and {total_bytes / requests:,.0f} bytes per request")
    sites = size.most_common(top)
    delta = text_delta(binary)
    out = subprocess.run(["addr2line", "-e", binary, "-i", "-f", "-C", "-a"] + [hex(a + delta - 1) for a, _ in sites],
                         capture_output=True, text=True).stdout
    print("| share of bytes | bytes | per request | site (innermost first, inlined frames expanded) |")
    print("|---:|---:|---:|---|")
    for (addr, nbytes), block in zip(sites, re.split(r"\n(?=0x)", out.strip())):
        lines = block.split("\n")[1:]
        frames = [f"{lines[i].split('::')[-1][:32]}@{os.path.basename(lines[i + 1])}" for i in range(0, min(len(lines), 8), 2)]
        print(f"| {100 * nbytes / total_bytes:.1f} % | {nbytes / count[addr]:.0f} | {count[addr] / requests:.2f} | "
              f"{' ← '.join(frames)} |")


if __name__ == "__main__":
    main()
