#!/usr/bin/env python3
"""Interop check: the MCP Inspector's CLI mode against the catalog example.

    inspector_cli.py --inspector PATH/TO/mcp-inspector --url http://127.0.0.1:PORT/mcp/v1 [--era default|legacy|modern]
    inspector_cli.py --inspector PATH/TO/mcp-inspector --stdio target/debug/catalog [--era ...]

Runs `mcp-inspector --cli URL --transport http --protocol-era ERA --method
tools/list --strict` (with --stdio: the Inspector starts `catalog --stdio`
itself for each command, RUST_LOG=warn), then `--method tools/call` on several tools,
resources/templates/list, resources/read, prompts/list and prompts/get, and checks
each answer and that the Inspector printed nothing on stderr: it warns there
about every schema it cannot use strictly (e.g. `unknown format "uint64"
ignored`) and, with --strict, about tool-schema portability problems.
Exits 1 with a message for every mismatch.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

TIMEOUT = 90


ERA = "legacy"
HEADERS: list[str] = []
STDIO = False


def run(inspector: str, url: str, *args: str, tool_error: bool = False) -> tuple[Any, str, list[str]]:
    """The parsed stdout (for a tool error: the error the CLI prints on
    stderr), the remaining stderr text, and problems running the command.
    `url` is the endpoint, or with --stdio the catalog binary."""
    headers = [part for header in HEADERS for part in ("--header", header)]
    era = [] if ERA == "default" else ["--protocol-era", ERA]
    # The server's own log lines go to the Inspector's stderr: warnings only.
    target = ["-e", "RUST_LOG=warn", url, "--stdio"] if STDIO else [url, "--transport", "http"]
    command = [inspector, "--cli", *target, *era, *headers, *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "", [f"{' '.join(args)}: no answer within {TIMEOUT} s"]
    problems = []
    if tool_error:
        # The CLI exits 5 and reports an `isError: true` result on stderr.
        try:
            reported = json.loads(done.stderr)
        except json.JSONDecodeError:
            return None, done.stderr, [f"{' '.join(args)}: expected a tool error, got: {done.stderr[:300]!r}"]
        if done.returncode != 5:
            problems.append(f"{' '.join(args)}: exit {done.returncode}, expected 5 for a tool error")
        return reported, "", problems
    if done.returncode != 0:
        problems.append(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[:500]}")
    try:
        parsed = json.loads(done.stdout)
    except json.JSONDecodeError:
        parsed = None
        problems.append(f"{' '.join(args)}: stdout is not JSON: {done.stdout[:300]!r}")
    return parsed, done.stderr, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inspector", required=True)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url")
    target.add_argument("--stdio", metavar="CATALOG", help="the catalog binary, started with --stdio by the Inspector")
    parser.add_argument("--era", default="legacy", choices=["default", "legacy", "modern"])
    parser.add_argument("--header", action="append", default=[],
                        help='an HTTP header for every request, "Name: Value" (repeatable)')
    args = parser.parse_args()
    global ERA, HEADERS, STDIO
    ERA = args.era
    HEADERS = args.header
    STDIO = args.stdio is not None
    if STDIO:
        args.url = args.stdio
    failures: list[str] = []

    def check(ok: bool, what: str, detail: Any = None) -> None:
        print(f"  {'ok  ' if ok else 'FAIL'}  {what}")
        if not ok:
            failures.append(what if detail is None else f"{what}: {detail}")

    listed, stderr, problems = run(args.inspector, args.url, "--method", "tools/list", "--strict")
    failures.extend(problems)
    names = {tool.get("name") for tool in (listed or {}).get("tools", [])}
    check({"ping", "Catalog.get", "Catalog.search", "Catalog.list"} <= names, "tools/list has the catalog's tools", names)
    check(stderr.strip() == "", "tools/list: nothing on stderr", stderr.strip()[:800])

    calls = [
        ("Catalog.get", ["id=7"], lambda r: r.get("structuredContent") == {"result": {"id": 7, "name": "n7"}}),
        ("Catalog.search", ["query=n1", "limit=2"], lambda r: len(r.get("structuredContent", {}).get("result", [])) == 2),
        ("Catalog.list", ["sort=name"], lambda r: r.get("structuredContent", {}).get("result", [{}])[0].get("name") == "n1"),
        ("Catalog.categories", [], lambda r: r.get("structuredContent", {}).get("result", {}).get("name") == "All"),
        ("ping", ["who=inspector"], lambda r: r.get("structuredContent") == {"result": "pong inspector"}),
        ("Catalog.get", ["id=999"], lambda r: r.get("error", {}).get("code") == "tool_is_error"),
    ]
    for tool, tool_args, expect in calls:
        extra = [part for arg in tool_args for part in ("--tool-arg", arg)]
        command = ["--method", "tools/call", "--tool-name", tool, *extra]
        result, stderr, problems = run(args.inspector, args.url, *command, tool_error="id=999" in tool_args)
        failures.extend(problems)
        check(result is not None and expect(result), f"tools/call {tool} {' '.join(tool_args)}", result)
        check(stderr.strip() == "", f"tools/call {tool}: nothing on stderr", stderr.strip()[:800])

    # Resources and prompts, as the Inspector lists and reads them.
    others = [
        (["--method", "resources/templates/list"],
         lambda r: any(t.get("uriTemplate") == "catalog://products/{id}" for t in r.get("resourceTemplates", []))),
        (["--method", "resources/read", "--uri", "catalog://products/7"],
         lambda r: json.loads(r.get("contents", [{}])[0].get("text", "null")) == {"id": 7, "name": "n7"}),
        (["--method", "prompts/list"], lambda r: any(p.get("name") == "Catalog.review" for p in r.get("prompts", []))),
        (["--method", "prompts/get", "--prompt-name", "Catalog.review", "--prompt-args", "name=n7", "tone=friendly"],
         lambda r: [m.get("content", {}).get("type") for m in r.get("messages", [])] == ["resource", "text"]),
    ]
    for command, expect in others:
        result, stderr, problems = run(args.inspector, args.url, *command)
        failures.extend(problems)
        check(result is not None and expect(result), " ".join(command[1:]), result)
        check(stderr.strip() == "", f"{command[1]}: nothing on stderr", stderr.strip()[:800])

    if failures:
        print(f"inspector ({ERA}{', stdio' if STDIO else ''}): {len(failures)} failure(s)", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(f"inspector ({ERA}{', stdio' if STDIO else ''}): all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
