#!/usr/bin/env python3
"""Per-request cache misses and branch mispredictions under callgrind's model.

    bench/cache_model.py target/release/catalog ["mcp-2026 tools/call cached"]
    bench/cache_model.py --baseline bench/baseline/target/release/bench-baseline ["rpc single"]

Runs the server under `valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes`
twice (bench/budget.py's driver and kinds of request: 1,000 and 3,000 requests)
and prints each event per request, the difference of the two runs divided by
2,000 (start-up and shutdown cancel out). Instruction counts alone miss what
the cache and the branch predictor cost (BENCHMARKS.md, run 24).
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget  # noqa: E402

LOW, HIGH = 1000, 3000


def with_cache_sim(popen):
    """budget.py's callgrind runs (which model the caches with fixed sizes,
    budget.CACHE_SIM) with the branch predictor's model too."""
    def start(args, *rest, **kwargs):
        if args and args[0] == "valgrind":
            args = [args[0], args[1], "--branch-sim=yes", *args[2:]]
        return popen(args, *rest, **kwargs)
    return start


def events(binary, kind, count, baseline):
    with tempfile.TemporaryDirectory() as work:
        port = budget.free_port()

        def bare(_catalog, port):
            budget.SERVER_ENV["PORT"] = str(port)
            return [binary]

        if baseline:
            budget.total(binary, kind, count, work, port, command=bare)
        else:
            budget.total(binary, kind, count, work, port)
        names, totals = [], []
        with open(os.path.join(work, f"cg.{port}.out")) as f:
            for line in f:
                if line.startswith("events:"):
                    names = line.split()[1:]
                elif line.startswith(("totals:", "summary:")):
                    totals = [int(x) for x in line.split()[1:]]
        return dict(zip(names, totals))


def main():
    args = sys.argv[1:]
    baseline = "--baseline" in args
    args = [a for a in args if a != "--baseline"]
    if not args:
        sys.exit(__doc__)
    binary = args[0]
    kind = args[1] if len(args) > 1 else "mcp-2026 tools/call cached"
    if kind not in budget.KINDS or budget.KINDS[kind][1] == "stdio":
        sys.exit(f"cache_model.py: an HTTP kind of bench/budget.py, one of: {', '.join(budget.KINDS)}")
    budget.subprocess.Popen = with_cache_sim(subprocess.Popen)
    low, high = events(binary, kind, LOW, baseline), events(binary, kind, HIGH, baseline)
    labels = {"Ir": "instructions", "I1mr": "instruction-cache misses", "D1mr": "data-cache read misses",
              "D1mw": "data-cache write misses", "Bim": "mispredicted indirect branches",
              "Bcm": "mispredicted conditional branches"}
    print(f"{kind}: {binary}, per request")
    for event, label in labels.items():
        if event in low and event in high:
            print(f"  {label:34} {(high[event] - low[event]) / (HIGH - LOW):10.1f}")


if __name__ == "__main__":
    main()
