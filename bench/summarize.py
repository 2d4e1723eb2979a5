#!/usr/bin/env python3
"""Summarise a bench/run.sh results directory as a markdown table.

    python3 bench/summarize.py bench/results/<stamp>        # or .../results.jsonl

Per server and concurrency: medians over the measured runs of requests/s,
p50 and p99 latency, server CPU time per call (server CPU seconds over the
measured window / requests), and the server's peak RSS (max over runs). Then
ratios of ours against the bare-hyper baseline and the rmcp peer measured in
the same run. Standard library only.
"""
import json
import os
import statistics
import sys

LABELS = {
    "baseline": "bare hyper 1.x + serde_json (`bench/baseline`)",
    "baseline-stateless": "bare hyper, fed the 2026-07-28 request (same bytes in and out as `stateless`)",
    "baseline-rpc": "bare hyper, fed the `/rpc` call (same bytes in and out as `rpc`)",
    "ours": "ours: catalog `/mcp/v1`, session, `Catalog.get`",
    "stateless": "ours: catalog `/mcp/v1`, 2026-07-28 stateless, `Catalog.get`",
    "rpc": "ours: catalog `/rpc`, JSON-RPC `Catalog.get`",
    "candidate": "candidate build of the catalog (`CANDIDATE=`), session",
    "candidate-stateless": "candidate build of the catalog (`CANDIDATE=`), 2026-07-28 stateless",
    "rmcp": "rmcp 3.11 stateless JSON (`add`)",
}
ORDER = ["baseline", "baseline-stateless", "baseline-rpc", "ours", "stateless", "rpc", "candidate", "candidate-stateless",
         "rmcp"]


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl")
    runs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                runs.append(json.loads(line))
    return os.path.dirname(path), runs


def summarise(runs):
    groups = {}
    for r in runs:
        groups.setdefault((r["server"], r["c"]), []).append(r)
    out = {}
    for key, rs in groups.items():
        errors = sum(r[k] for r in rs for k in r if k.startswith("err_"))
        out[key] = {
            "n": len(rs),
            "rps": statistics.median(r["rps"] for r in rs),
            "rps_min": min(r["rps"] for r in rs),
            "rps_max": max(r["rps"] for r in rs),
            "p50": statistics.median(r["p50_us"] for r in rs),
            "p99": statistics.median(r["p99_us"] for r in rs),
            "cpu_us": statistics.median(r["server_cpu_s"] * 1e6 / max(r["requests"], 1) for r in rs),
            "rss_mib": max(r.get("peak_rss_kib", 0) for r in rs) / 1024,
            "errors": errors,
            "other": max(r.get("other_cpu_s", 0) for r in rs),
            "steal": max(r.get("steal_s", 0) for r in rs),
        }
    return out


def fmt_us(us):
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.0f} µs"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory, runs = load(sys.argv[1])
    if not runs:
        sys.exit("no runs")
    s = summarise(runs)
    meta = {}
    try:
        with open(os.path.join(directory, "meta.json")) as f:
            meta = json.load(f)
    except OSError:
        pass
    servers = [x for x in ORDER if any(k[0] == x for k in s)] + sorted({k[0] for k in s} - set(ORDER))
    cs = sorted({k[1] for k in s})

    p = print
    if meta:
        p(f"Run {meta.get('started_utc', '?')} · {meta.get('cpu', '?')} × {meta.get('cpus', '?')} · "
          f"{meta.get('kernel', '?')} · {meta.get('rustc', '?')} · git {meta.get('git_rev', '?')}"
          f"{' (dirty)' if meta.get('git_dirty') else ''}")
        p()
    p("| server | c | req/s (median) | min–max | p50 | p99 | server CPU / call | peak RSS | runs | errors | other CPU (max) |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for srv in servers:
        for c in cs:
            v = s.get((srv, c))
            if not v:
                continue
            p(f"| {LABELS.get(srv, srv)} | {c} | {v['rps']:,.0f} | {v['rps_min']:,.0f}–{v['rps_max']:,.0f} | "
              f"{fmt_us(v['p50'])} | {fmt_us(v['p99'])} | {v['cpu_us']:.1f} µs | {v['rss_mib']:.1f} MiB | "
              f"{v['n']} | {v['errors']} | {v['other']:.2f} s |")
    p()
    rejected = os.path.join(directory, "rejected.jsonl")
    n_rej = sum(1 for line in open(rejected) if line.strip()) if os.path.exists(rejected) else 0
    p(f"Medians over the runs; \"other CPU\" is CPU time used by other processes during a measured "
      f"run (runs above the limit were redone: {n_rej} rejected, see rejected.jsonl).")
    p()
    pairs = [
        ("ours", "baseline"),
        ("stateless", "baseline-stateless"),
        ("stateless", "baseline"),
        ("rpc", "baseline-rpc"),
        ("ours", "rmcp"),
        ("stateless", "rmcp"),
        ("candidate", "baseline"),
        ("candidate", "ours"),
        ("candidate-stateless", "baseline-stateless"),
        ("candidate-stateless", "stateless"),
    ]
    for mine, other in pairs:
        if not any(k[0] == other for k in s) or not any(k[0] == mine for k in s):
            continue
        p(f"{mine.capitalize()} / {other} (throughput: higher is better; latency, CPU, RSS: lower is better):")
        p()
        p("| c | req/s | p50 | p99 | CPU / call | peak RSS |")
        p("|---:|---:|---:|---:|---:|---:|")
        for c in cs:
            o, b = s.get((mine, c)), s.get((other, c))
            if not o or not b:
                continue
            r = lambda k: o[k] / b[k] if b[k] else float("nan")
            p(f"| {c} | **{r('rps'):.0%}** | {r('p50'):.2f}× | {r('p99'):.2f}× | {r('cpu_us'):.2f}× | {r('rss_mib'):.2f}× |")
        p()
    # Issue 19's targets at c=32.
    goals = (
        ("ours", "baseline", 0.85),
        ("stateless", "baseline-stateless", 0.85),
        ("rpc", "baseline-rpc", 0.90),
        ("candidate", "baseline", 0.85),
    )
    for mine, floor, goal in goals:
        target = s.get((mine, 32)), s.get((floor, 32))
        if all(target):
            ratio = target[0]["rps"] / target[1]["rps"]
            verdict = "met" if ratio >= goal else "NOT met"
            p(f"Target ({mine} ≥ {goal:.0%} of {floor} at c=32): {ratio:.0%} — {verdict}.")


if __name__ == "__main__":
    main()
