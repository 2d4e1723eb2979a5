"""The code a request runs, in distinct instruction-cache lines.

Read from two callgrind outputs written with `--dump-instr=yes` (bench/cache_model.py
`--footprint`): an instruction belongs to the request's footprint when it ran at
least once per request on average between the two runs (its count grew by at
least the number of requests between them). Its 64-byte line is counted once,
under the crate of the function it is in.

When a request's footprint is larger than the first-level instruction cache
(32-64 KB on current x86 cores), nearly every line misses once per request,
whatever the order the code runs in: the misses follow the footprint
(BENCHMARKS.md, run 27).
"""

import collections
import re

LINE = 64


def addresses(path):
    """Per instruction address: its own instruction count, and its function."""
    counts, owner, names = collections.Counter(), {}, {}
    positions, address, function, call_line = 1, 0, "?", False

    def name(token):
        number, _, text = token.partition(" ")
        if text:
            names[number] = text
        return names.get(number, "?")

    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("positions:"):
                positions = len(line.split()) - 1
            elif line.startswith("fn="):
                function = name(line[3:].strip())
            elif line.startswith("cfn="):
                name(line[4:].strip())
            elif line.startswith("calls="):
                call_line = True
            elif line[:1] in "+-*0123456789":
                fields = line.split()
                first = fields[0]
                if first.startswith("0x"):
                    address = int(first, 16)
                elif first[0] in "+-":
                    address += int(first)
                if call_line:
                    # A call's cost line carries the callee's inclusive cost.
                    call_line = False
                    continue
                if len(fields) > positions:
                    counts[address] += int(fields[positions])
                    owner[address] = function
    return counts, owner


def crate_of(function):
    """The crate a function's symbol names (drop glue and C functions apart)."""
    symbol = function.split(" [")[0]
    symbol = symbol.split(":", 1)[1] if symbol.startswith("???:") else symbol
    if "::" not in symbol:
        # Not a Rust path: the C library (malloc, memcpy, the syscalls' stubs).
        return "libc"
    if "drop_in_place" in symbol:
        return "drop glue"
    symbol = re.sub(r"^[<&]+(mut )?", "", symbol)
    return re.split(r"::|<| ", symbol)[0] or "?"


def footprint(low_path, high_path, requests):
    """Distinct code lines run at least once per request: total, by crate."""
    low, _ = addresses(low_path)
    high, owner = addresses(high_path)
    lines, by_crate = set(), collections.defaultdict(set)
    for address, count in high.items():
        if count - low.get(address, 0) >= requests:
            lines.add(address // LINE)
            by_crate[crate_of(owner[address])].add(address // LINE)
    return len(lines), {crate: len(found) for crate, found in by_crate.items()}
