#!/usr/bin/env python3
"""Judges a conformance-suite run against the expected-failures baseline.

    conformance_baseline.py --results DIR --baseline FILE [--expected-count N]

DIR is the suite's `--output-dir` (one `server-<scenario>-<timestamp>/checks.json`
per scenario). A scenario fails when any of its checks is FAILURE or WARNING (the
suite's own rule for baselines), or when it left no readable checks.json. A
baseline entry names a whole scenario, or one check of it as `scenario:check-id`:
then every other check of the scenario must pass.

Exit 1 when a scenario outside the baseline fails (or when fewer scenarios ran
than expected); a baseline scenario that passes only gets a note, so the baseline
can shrink. Standard library only: it runs on the system Python.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


def load_baseline(path: Path) -> list[str]:
    """The `server:` list of the suite's expected-failures YAML (`server:` / `client:` lists of names);
    none when the file does not exist (every scenario must pass)."""
    scenarios: list[str] = []
    if not path.exists():
        return scenarios
    section = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        key = re.fullmatch(r"([A-Za-z_-]+):\s*(\[\s*\])?", line)
        item = re.fullmatch(r"\s+-\s+['\"]?([A-Za-z0-9_.:/-]+)['\"]?", line)
        if key:
            section = key.group(1)
        elif item and section is not None:
            if section == "server":
                scenarios.append(item.group(1))
        else:
            raise SystemExit(f"{path}:{number}: cannot read this line of the baseline: {raw!r}")
    return scenarios


def load_results(results: Path) -> dict[str, list[dict]]:
    """Scenario name -> its checks (an empty list when checks.json is missing or unreadable)."""
    runs: dict[str, list[dict]] = {}
    for directory in sorted(p for p in results.iterdir() if p.is_dir()):
        match = RESULT_DIR.match(directory.name)
        if not match:
            continue
        try:
            checks = json.loads((directory / "checks.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            checks = []
        runs[match.group("scenario")] = checks if isinstance(checks, list) else []
    return runs


def problems(checks: list[dict], excused: set[str] = frozenset()) -> tuple[list[str], set[str]]:
    """The failing checks not excused, and the excused check ids that failed."""
    if not checks:
        return ["no checks recorded (the scenario crashed?)"], set()
    out, used = [], set()
    for check in checks:
        if check.get("status") in ("FAILURE", "WARNING"):
            if check.get("id") in excused:
                used.add(check.get("id"))
                continue
            message = check.get("errorMessage") or check.get("description") or ""
            out.append(f"{check.get('status')} {check.get('id')}: {message}")
    return out, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--expected-count", type=int, default=None, help="scenarios the suite said it would run")
    args = parser.parse_args()

    entries = load_baseline(args.baseline)
    baseline = [e for e in entries if ":" not in e]
    excused: dict[str, set[str]] = {}
    for entry in entries:
        if ":" in entry:
            scenario, check = entry.split(":", 1)
            excused.setdefault(scenario, set()).add(check)
    runs = load_results(args.results)
    passed, expected, unexpected, stale = [], [], [], []
    for scenario, checks in runs.items():
        failing, used = problems(checks, excused.get(scenario, set()))
        for check in sorted(excused.get(scenario, set()) - used):
            stale.append(f"{scenario}:{check}")
        if failing and scenario in baseline:
            expected.append(scenario)
        elif failing:
            unexpected.append((scenario, failing))
        elif scenario in baseline:
            stale.append(scenario)
        elif used:
            expected.append(f"{scenario} (only {', '.join(sorted(used))})")
        else:
            passed.append(scenario)

    print(f"conformance: {len(runs)} scenarios ran: {len(passed) + len(stale)} passed, "
          f"{len(expected)} failed as expected (baseline), {len(unexpected)} failed unexpectedly")
    for scenario in passed:
        print(f"  pass      {scenario}")
    for scenario in expected:
        print(f"  baseline  {scenario}")
    for scenario in stale:
        print(f"  NOTE      {scenario} is in the expected-failures baseline but passes now: "
              f"remove it from {args.baseline}")
    for scenario, failing in unexpected:
        print(f"  FAIL      {scenario} (not in the baseline)")
        for line in failing:
            print(f"              {line}")
    not_run = [s for s in baseline + list(excused) if s not in runs]
    if not_run:
        print(f"  (baseline entries this run did not include: {', '.join(not_run)})")

    status = 0
    if not runs:
        print(f"conformance: no results found in {args.results}", file=sys.stderr)
        status = 1
    if args.expected_count is not None and len(runs) != args.expected_count:
        print(f"conformance: the suite announced {args.expected_count} scenarios but {len(runs)} left results",
              file=sys.stderr)
        status = 1
    if unexpected:
        names = ", ".join(s for s, _ in unexpected)
        print(f"conformance: FAILED: scenarios outside the baseline failed: {names}", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
