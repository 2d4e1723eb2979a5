#!/usr/bin/env python3
"""bench/compile_budget.py — issue 19's compile-time guard.

    bench/compile_budget.py [--update]

Counts rustc's instructions (callgrind around rustc, as `bench/scale.py rustc`)
for the fixture crate `bench/scale` with 200 methods, annotated and plain,
not `async` and `async`, and compares each ratio (annotated over plain) with
bench/compile_budget.txt: a ratio 3 % over its budget fails. Instructions do
not move with the machine; the ratio does not move with the toolchain's speed.
--update writes the measured ratios (after a compile-time change).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scale  # noqa: E402

BUDGET = os.path.join(HERE, "compile_budget.txt")
TOLERANCE = 0.03
HEADER = """\
# Rustc's instructions for the fixture bench/scale with 200 methods, annotated over plain
# (bench/compile_budget.py; CI fails a ratio 3 % over). Lower them with every compile-time
# change: bench/compile_budget.py --update
"""


def read_budget():
    budget = {}
    with open(BUDGET) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                kind, ratio = line.split()
                budget[kind] = float(ratio)
    return budget


def main():
    update = sys.argv[1:] == ["--update"]
    if sys.argv[1:] and not update:
        raise SystemExit(__doc__)
    measured = {}
    for kind, (annotated, plain) in scale.rustc_counts().items():
        measured[kind] = annotated / plain
        print(f"{kind:6} annotated {annotated / 1e9:.3f} G, plain {plain / 1e9:.3f} G: ratio {measured[kind]:.3f}")
    if update:
        with open(BUDGET, "w") as f:
            f.write(HEADER + "".join(f"{kind:6} {ratio:.3f}\n" for kind, ratio in measured.items()))
        print(f"compile_budget.py: wrote {BUDGET}")
        return
    failed = False
    for kind, allowed in read_budget().items():
        ratio = measured[kind]
        verdict = "ok"
        if ratio > allowed * (1 + TOLERANCE):
            verdict, failed = f"{(ratio / allowed - 1) * 100:.1f} % over its budget", True
        elif ratio < allowed * (1 - TOLERANCE):
            verdict = f"{(1 - ratio / allowed) * 100:.1f} % under: lower the budget (--update)"
        print(f"{kind:6} {ratio:.3f} / {allowed:.3f}  {verdict}")
    if failed:
        raise SystemExit("compile_budget.py: the annotations cost the compiler more than bench/compile_budget.txt allows")


if __name__ == "__main__":
    main()
