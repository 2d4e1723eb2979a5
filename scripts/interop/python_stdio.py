#!/usr/bin/env python3
"""Interop check: the official MCP Python SDK (mcp==2.3.0) starting the catalog with --stdio.

    python_stdio.py --catalog target/debug/catalog [--mode legacy|auto|2026-07-28 ...]

For each mode (default: all three), the SDK launches `catalog --stdio` itself
(StdioServerParameters, as a desktop client's `command`/`args` does) and runs the
same checks as python_client.py over the pipes: every page of tools/list, tool
calls and their results, tool errors, progress and log notifications while a call
runs, validation (the SDK fails on a stdout line that is not a JSON-RPC message).
Then, per mode: the server logged on stderr, and ended by itself when the SDK
closed its stdin (its last log line says so; the SDK kills it only after a grace
period).
Exits 1 with a message for every mismatch, 2 when the connection itself fails.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile

from mcp.client.stdio import StdioServerParameters, stdio_client

from python_client import Checker, leaves, run

MODES = ("legacy", "auto", "2026-07-28")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", required=True, help="the catalog binary (target/debug/catalog)")
    parser.add_argument("--mode", action="append", choices=MODES, help="a mode to check (repeatable; default all)")
    args = parser.parse_args()
    failed = 0
    for mode in args.mode or MODES:
        print(f"python-sdk stdio interop ({mode}): {args.catalog} --stdio")
        checker = Checker()
        with tempfile.TemporaryFile(mode="w+") as errlog:
            params = StdioServerParameters(command=args.catalog, args=["--stdio"], env={"RUST_LOG": "info"})
            try:
                asyncio.run(run("stdio", mode, checker, server=stdio_client(params, errlog=errlog)))
            except Exception as error:  # noqa: BLE001 - report any SDK or transport failure and exit non-zero
                for leaf in leaves(error):
                    print(f"python-sdk stdio interop ({mode}): FAILED: {type(leaf).__name__}: {leaf}", file=sys.stderr)
                failed = 2
                continue
            errlog.seek(0)
            stderr = errlog.read()
        checker.check("serving MCP" in stderr, "the server logs on stderr", stderr[-500:])
        # The SDK closes stdin, then waits for the process before killing it: this
        # line is the catalog's last, written when it ends by itself at EOF.
        checker.check("stdin closed; exiting" in stderr, "the server exits by itself when stdin closes", stderr[-500:])
        if checker.failures:
            print(f"python-sdk stdio interop ({mode}): FAILED: {len(checker.failures)} of "
                  f"{checker.passed + len(checker.failures)} checks failed:", file=sys.stderr)
            for failure in checker.failures:
                print(f"  - {failure}", file=sys.stderr)
            failed = max(failed, 1)
        else:
            print(f"python-sdk stdio interop ({mode}): all {checker.passed} checks passed")
    return failed


if __name__ == "__main__":
    sys.exit(main())
