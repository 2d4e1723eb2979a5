#!/usr/bin/env python3
"""Per-request cache misses and branch mispredictions under callgrind's model.

    bench/cache_model.py target/release/catalog ["mcp-2026 tools/call cached"]
    bench/cache_model.py --baseline bench/baseline/target/release/bench-baseline ["rpc single"]
    bench/cache_model.py --footprint target/release/catalog ["mcp-2026 tools/call cached"]

Runs the server under `valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes`
twice (bench/budget.py's driver and kinds of request: 1,000 and 3,000 requests)
and prints each event per request, the difference of the two runs divided by
2,000 (start-up and shutdown cancel out). Instruction counts alone miss what
the cache and the branch predictor cost (BENCHMARKS.md, run 24).

`--footprint` adds the request's code footprint: the distinct 64-byte lines of
code it runs, in all and by crate (bench/code_footprint.py; BENCHMARKS.md,
run 27).
"""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget  # noqa: E402
import code_footprint  # noqa: E402

LOW, HIGH = 1000, 3000


def with_cache_sim(popen, per_instruction):
    """budget.py's callgrind runs (which model the caches with fixed sizes,
    budget.CACHE_SIM) with the branch predictor's model too, and costs per
    instruction when `per_instruction` (for the footprint)."""
    extra = ["--branch-sim=yes"] + (["--dump-instr=yes"] if per_instruction else [])

    def start(args, *rest, **kwargs):
        if args and args[0] == "valgrind":
            args = [args[0], args[1], *extra, *args[2:]]
        return popen(args, *rest, **kwargs)
    return start


def events(binary, kind, count, baseline, keep=None):
    """Each event's total over a run of `count` requests; the callgrind
    output is copied to `keep` when given."""
    with tempfile.TemporaryDirectory() as work:
        port = budget.free_port()

        def bare(_catalog, port):
            budget.SERVER_ENV["PORT"] = str(port)
            return [binary]

        if baseline:
            budget.total(binary, kind, count, work, port, command=bare)
        else:
            budget.total(binary, kind, count, work, port)
        out = os.path.join(work, f"cg.{port}.out")
        if keep:
            shutil.copy(out, keep)
        return budget.read_events(out)


def main():
    args = sys.argv[1:]
    baseline, footprint = "--baseline" in args, "--footprint" in args
    args = [a for a in args if a not in ("--baseline", "--footprint")]
    if not args:
        sys.exit(__doc__)
    binary = args[0]
    kind = args[1] if len(args) > 1 else "mcp-2026 tools/call cached"
    if kind not in budget.KINDS or budget.KINDS[kind][1] == "stdio":
        sys.exit(f"cache_model.py: an HTTP kind of bench/budget.py, one of: {', '.join(budget.KINDS)}")
    budget.subprocess.Popen = with_cache_sim(subprocess.Popen, footprint)
    with tempfile.TemporaryDirectory() as kept:
        low_out, high_out = os.path.join(kept, "low.out"), os.path.join(kept, "high.out")
        low = events(binary, kind, LOW, baseline, low_out if footprint else None)
        high = events(binary, kind, HIGH, baseline, high_out if footprint else None)
        lines = code_footprint.footprint(low_out, high_out, HIGH - LOW) if footprint else None
    labels = {"Ir": "instructions", "I1mr": "instruction-cache misses", "D1mr": "data-cache read misses",
              "D1mw": "data-cache write misses", "Bim": "mispredicted indirect branches",
              "Bcm": "mispredicted conditional branches"}
    print(f"{kind}: {binary}, per request")
    for event, label in labels.items():
        if event in low and event in high:
            print(f"  {label:34} {(high[event] - low[event]) / (HIGH - LOW):10.1f}")
    if lines:
        total, by_crate = lines
        size = code_footprint.LINE / 1024
        print(f"  {'code footprint (64-byte lines)':34} {total:8d}    ({total * size:.1f} KB)")
        for crate, count in sorted(by_crate.items(), key=lambda item: -item[1])[:15]:
            print(f"    {crate:32} {count:8d}    ({count * size:.1f} KB)")


if __name__ == "__main__":
    main()
