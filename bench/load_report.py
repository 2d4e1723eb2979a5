#!/usr/bin/env python3
"""bench/load_report.py RESULTS_DIR — judges a bench/load.sh run.

Reads RESULTS_DIR/{meta.json,clean.json,mixed.json} (meta from load.sh, the
other two from bench-load), writes RESULTS_DIR/load.json (everything plus the
verdict) and RESULTS_DIR/load-summary.md, prints the summary, and exits 1 when
the run failed:

* a crash: the server process gone, or not answering a valid call after a run;
* any valid call (warm-up included) without a success answer;
* a run stopped by the tool's wall-clock cap (valid calls left unsent);
* RSS after settling above baseline + max(RSS_SLACK_MIB, RSS_SLACK_PCT % of
  baseline), baseline being the attack-free run's sample after its warm-up;
* open fds after settling above that baseline's + FD_SLACK;
* RSS at its peak (during either run) above the baseline + PEAK_SLACK_MIB:
  what the server's limits let the attack hold (non-reading clients, slow
  clients, the flood) must stay within that;
* with a token, any request with a wrong or missing token answered 2xx.

Standard library only.
"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def mib(kib):
    return "–" if kib is None else f"{kib / 1024:.1f}"


def ms(us):
    return "–" if us is None else f"{us / 1000:.2f}"


def pct(x):
    return "–" if x is None else f"{100 * x:.0f} %"


def main():
    out = sys.argv[1]
    meta = load(os.path.join(out, "meta.json")) or {}
    runs = {m: load(os.path.join(out, f"{m}.json")) for m in ("clean", "mixed")}
    limits = meta.get("limits", {})
    slack_mib = float(limits.get("rss_slack_mib", 16))
    slack_pct = float(limits.get("rss_slack_pct", 25))
    fd_slack = int(limits.get("fd_slack", 8))
    peak_slack_mib = float(limits.get("peak_slack_mib", 128))

    failures, warnings = [], []
    for mode, r in runs.items():
        if r is None:
            failures.append(f"{mode} run: no report (the load tool failed; see {mode}.log)")
            continue
        srv = r["server"]
        if not srv.get("alive_after") or srv.get("health_after") != "ok":
            failures.append(f"{mode} run: server crashed or stopped answering (alive: {srv.get('alive_after')}, "
                            f"health: {srv.get('health_after')})")
        v = r["valid"]
        bad = v["failures"] + r.get("warmup_failures", 0)
        if bad:
            failures.append(f"{mode} run: {bad} valid call(s) failed: " + "; ".join(v["failure_samples"][:5]))
        if r.get("capped"):
            failures.append(f"{mode} run: stopped by the wall-clock cap ({r['config']['max_secs']} s), "
                            f"{v['requests']} of {r['config']['requests']} valid calls sent")
        util = r.get("cpu_valid_window", {}).get("tool_util")
        if util is not None and util > 0.9:
            warnings.append(f"{mode} run: the load tool used {pct(util)} of its CPU: it may be the bottleneck "
                            "(CLIENT=lean costs less per call; or lower CONCURRENCY)")
        for name, c in r["classes"].items():
            served = sum(n for k, n in c["outcomes"].items() if k.startswith("2"))
            if name.startswith("auth.") and served:
                failures.append(f"{mode} run: {name}: {served} request(s) with a wrong or missing token were served "
                                "(is the server configured with the token? see SERVER_ARGS)")
            elif c.get("unexpected"):
                warnings.append(f"{mode} run: {name}: {c['unexpected']} unexpected outcome(s), e.g. "
                                + "; ".join(c["samples"][:2]))
    if not meta.get("server_alive_at_end", True):
        failures.append(f"server process exited during the test (status {meta.get('server_exit_status')})")
    if meta.get("server_log_panics"):
        warnings.append(f"the server log has {meta['server_log_panics']} line(s) mentioning a panic")

    clean, mixed = runs["clean"], runs["mixed"]
    memory = {}
    if clean and mixed and clean["server"]["before"] and mixed["server"]["after"]:
        base = clean["server"]["before"]
        after = mixed["server"]["after"]
        allowed = base["rss_kib"] + max(slack_mib * 1024, base["rss_kib"] * slack_pct / 100)
        peak = max(x for x in (clean["server"]["peak_rss_kib"], mixed["server"]["peak_rss_kib"]) if x is not None)
        memory = {
            "baseline_rss_kib": base["rss_kib"], "peak_rss_kib": peak, "after_rss_kib": after["rss_kib"],
            "allowed_after_rss_kib": round(allowed), "hwm_kib": after["hwm_kib"],
            "baseline_fds": base["fds"], "peak_fds": max(clean["server"]["peak_fds"] or 0, mixed["server"]["peak_fds"] or 0),
            "after_fds": after["fds"], "allowed_after_fds": base["fds"] + fd_slack,
        }
        if after["rss_kib"] > allowed:
            failures.append(f"RSS after settling {mib(after['rss_kib'])} MiB > allowed {mib(allowed)} MiB "
                            f"(baseline {mib(base['rss_kib'])} MiB + max({slack_mib:g} MiB, {slack_pct:g} %))")
        if peak > base["rss_kib"] + peak_slack_mib * 1024:
            failures.append(f"RSS peak {mib(peak)} MiB > baseline {mib(base['rss_kib'])} MiB + {peak_slack_mib:g} MiB: "
                            "the attack held more memory than the server's limits allow")
        if peak <= allowed:
            warnings.append(f"the attack's RSS peak ({mib(peak)} MiB) stays within the allowance ({mib(allowed)} MiB): "
                            "a server that kept all of it would pass; raise the hostile mix or lower RSS_SLACK_MIB")
        if after["fds"] > base["fds"] + fd_slack:
            failures.append(f"open fds after settling {after['fds']} > baseline {base['fds']} + {fd_slack}")
    elif clean and mixed:
        warnings.append("no /proc samples of the server: memory not checked")

    verdict = "FAIL" if failures else "PASS"
    report = {"verdict": verdict, "failures": failures, "warnings": warnings, "memory": memory,
              "meta": meta, "runs": runs}
    with open(os.path.join(out, "load.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    md = summary(report)
    with open(os.path.join(out, "load-summary.md"), "w") as f:
        f.write(md)
    print(md)
    return 1 if failures else 0


def summary(rep):
    meta, runs, mem = rep["meta"], rep["runs"], rep["memory"]
    L = [f"# Load under attack: {rep['verdict']}", ""]
    L.append(f"{meta.get('started_utc', '?')}, git {meta.get('git_rev', '?')}"
             f"{' (dirty)' if meta.get('git_dirty') else ''}, {meta.get('cpu', '?')} × {meta.get('cpus', '?')}, "
             f"{meta.get('preset', '')}")
    L.append("")
    for x in rep["failures"]:
        L.append(f"* **failure:** {x}")
    for x in rep["warnings"]:
        L.append(f"* warning: {x}")
    if rep["failures"] or rep["warnings"]:
        L.append("")
    L += ["## Valid calls", "",
          "| run | calls | ok | failures | calls/s | p50 ms | p90 ms | p99 ms | max ms | tool CPU | server CPU | others' CPU |",
          "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for mode, r in runs.items():
        if not r:
            L.append(f"| {mode} | no report |||||||||||")
            continue
        v, lat, cpu = r["valid"], r["valid"]["latency_us"], r.get("cpu_valid_window", {})
        L.append(f"| {mode} | {v['requests']} | {v['ok']} | {v['failures'] + r.get('warmup_failures', 0)} | "
                 f"{v['throughput_rps']:.0f} | {ms(lat['p50'])} | {ms(lat['p90'])} | {ms(lat['p99'])} | "
                 f"{ms(lat['max'])} | {pct(cpu.get('tool_util'))} | {pct(cpu.get('server_util'))} | "
                 f"{pct(cpu.get('other_util'))} |")
    L += ["", "CPU: share of one CPU while the valid calls ran (server and tool pinned to one CPU each).", ""]
    L += ["## Server", "", "| run | RSS before MiB | RSS peak MiB | RSS after MiB | VmHWM MiB | fds before | fds peak | fds after | crash |",
          "|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for mode, r in runs.items():
        if not r:
            continue
        s = r["server"]
        b, a = s["before"] or {}, s["after"] or {}
        crash = "no" if s.get("alive_after") and s.get("health_after") == "ok" else "**yes**"
        L.append(f"| {mode} | {mib(b.get('rss_kib'))} | {mib(s.get('peak_rss_kib'))} | {mib(a.get('rss_kib'))} | "
                 f"{mib(a.get('hwm_kib'))} | {b.get('fds', '–')} | {s.get('peak_fds', '–')} | {a.get('fds', '–')} | {crash} |")
    mixed = runs.get("mixed")
    if mixed:
        hostile = sum(c["bytes_sent"] for n, c in mixed["classes"].items() if not n.startswith("valid."))
        L += ["", f"The hostile traffic of the mixed run sent {hostile / 2**20:.0f} MiB; its last request (slow clients "
              f"aside) was answered {mixed.get('hostile_jobs_s', 0):.1f} s after the start, the valid calls took "
              f"{mixed['valid']['wall_s']:.1f} s."]
    if mem:
        L += ["", f"Memory check: RSS after the mixed run and {meta.get('settle_secs', '?')} s of settling "
              f"{mib(mem['after_rss_kib'])} MiB, allowed {mib(mem['allowed_after_rss_kib'])} MiB "
              f"(attack-free baseline {mib(mem['baseline_rss_kib'])} MiB); fds {mem['after_fds']}, "
              f"allowed {mem['allowed_after_fds']}."]
    L += ["", "## Traffic classes", "",
          "| run | class | sent | outcomes | unexpected | max response B | server acted after (p50 / max ms) |",
          "|---|---|--:|---|--:|--:|--:|"]
    for mode, r in runs.items():
        if not r:
            continue
        for name, c in r["classes"].items():
            outcomes = ", ".join(f"{k}: {v}" for k, v in c["outcomes"].items())
            acted = ""
            if name.startswith("slow.") and c.get("latency_us"):
                acted = f"{ms(c['latency_us']['p50'])} / {ms(c['latency_us']['max'])}"
            L.append(f"| {mode} | {name} | {c['sent']} | {outcomes} | {c['unexpected']} | "
                     f"{c['max_response_bytes']} | {acted} |")
    L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
