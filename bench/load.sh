#!/usr/bin/env bash
# bench/load.sh — a bounded load test of the catalog under attack, on loopback.
#
# Builds the catalog (release) and the load tool (bench/load/, its own cargo
# workspace), starts `catalog --env prod` on a free loopback port, then runs
#   1. an attack-free run: valid JSON-RPC and MCP calls only;
#   2. a mixed run: the same number of valid calls at the same concurrency,
#      beside invalid calls, oversized bodies, slow clients, clients that
#      never read their responses, an initialize flood (and wrong/missing
#      tokens with TOKEN; and, with REDIS=1, a Redis that stalls for
#      STALL_SECS in the middle of it);
# and writes bench/data/<UTC stamp>/{load.json,load-summary.md} (plus each
# run's report, the server's log and meta.json). See BENCHMARKS.md, "Load
# under attack".
#
# Exits non-zero when the server crashed, when any valid call got an error
# (or no answer), when a run hit the tool's wall-clock cap, or when the
# server's RSS after settling is above baseline + max(RSS_SLACK_MIB,
# RSS_SLACK_PCT % of baseline) or its open fds above baseline + FD_SLACK, or
# its RSS peak above baseline + PEAK_SLACK_MIB (what the configured limits
# let the attack hold), or (with TOKEN) when a request with a wrong or
# missing token was served.
#
#   bench/load.sh             full run (about 1 minute, plus the build)
#   QUICK=1 bench/load.sh     CI-sized run (about 25 s, plus the build: 2 min in
#                             all after a change to the library, on 2 busy CPUs)
#
# Environment knobs (defaults: full / QUICK=1):
#   REQUESTS=200000/30000  valid calls per run     CONCURRENCY=32/16  valid workers
#   WARMUP=10000/2000      warm-up calls (not measured)
#   INVALID=50/10          requests of each of the 8 invalid kinds
#   OVERSIZED=20/5         oversized bodies of each kind (5 MiB Content-Length, chunked)
#   FLOOD=2000/300         initialize requests whose sessions are never reused
#   SLOW=20/5              slow connections of each kind (slowloris, short body, idle)
#   NON_READERS=20/5       clients that pipeline 1,000 calls (and a 1 MiB progress token)
#                          and never read: the server's write timeout must close them
#                          (give the server a --write-timeout below SLOW_SECS)
#   REDIS=1                run the catalog on a Redis of its own (redis-server on PATH),
#                          stopped (SIGSTOP) for STALL_SECS=3 during the mixed run: the
#                          valid calls (JSON-RPC and stateless MCP; sessions fail closed
#                          by design while it stalls) must all succeed
#   SLOW_SECS=20/6         how long a slow client holds on at most
#   HOSTILE_WORKERS=4      concurrent hostile requests
#   CLIENT=hyper           HTTP client of the valid calls: hyper, or lean (less CPU per
#                          call, for when the summary says the tool may be the bottleneck)
#   AUTH=50/10             wrong- and missing-token requests each (only with TOKEN)
#   TOKEN                  send "Authorization: Bearer $TOKEN" on valid (and hostile)
#                          calls, and test wrong/missing tokens: the server must be
#                          configured with the same token (SERVER_ARGS)
#   SERVER_ARGS            extra arguments for the catalog (e.g. its token option)
#   SETTLE=10/5            seconds after a run before the final memory sample
#   MAX_SECS=300/120       the tool's hard wall-clock cap per run
#   RSS_SLACK_MIB=16 RSS_SLACK_PCT=25 FD_SLACK=8   what "back near baseline" means:
#                          RSS after settling <= baseline + max(16 MiB, 25 %), fds <=
#                          baseline + 8 (why: BENCHMARKS.md, "Load under attack")
#   PEAK_SLACK_MIB=128     the most the attack may add to the RSS at its peak
#   RESULTS                output directory (default bench/data/<UTC stamp>)
#   SKIP_BUILD=1           use the binaries already built
#   CATALOG=path           the catalog binary to test (default: target/release/catalog,
#                          built first); given, it is used as it is (CI passes the debug
#                          build scripts/interop.sh made, to spare a release build)
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$bench/.." && pwd)
cd "$repo"

if [ "${QUICK:-0}" = 1 ]; then
  preset=quick
  : "${REQUESTS:=30000}" "${CONCURRENCY:=16}" "${WARMUP:=2000}" "${INVALID:=10}" "${OVERSIZED:=5}" "${FLOOD:=300}"
  : "${SLOW:=5}" "${SLOW_SECS:=6}" "${AUTH:=10}" "${SETTLE:=5}" "${MAX_SECS:=120}" "${NON_READERS:=5}"
else
  preset=full
  : "${REQUESTS:=200000}" "${CONCURRENCY:=32}" "${WARMUP:=10000}" "${INVALID:=50}" "${OVERSIZED:=20}" "${FLOOD:=2000}"
  : "${SLOW:=20}" "${SLOW_SECS:=20}" "${AUTH:=50}" "${SETTLE:=10}" "${MAX_SECS:=300}" "${NON_READERS:=20}"
fi
: "${HOSTILE_WORKERS:=4}" "${CLIENT:=hyper}" "${RSS_SLACK_MIB:=16}" "${RSS_SLACK_PCT:=25}" "${FD_SLACK:=8}" "${TOKEN:=}" "${SERVER_ARGS:=}"
: "${PEAK_SLACK_MIB:=128}" "${REDIS:=0}" "${STALL_SECS:=3}"
RESULTS=${RESULTS:-$bench/data/$(date -u +%Y%m%dT%H%M%SZ)}
TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
build_catalog=1
[ -n "${CATALOG:-}" ] && build_catalog=0
CATALOG=${CATALOG:-$TARGET_DIR/release/catalog}
LOAD=$bench/load/target/release/bench-load
for t in python3; do command -v "$t" > /dev/null || { echo "load.sh: needs $t" >&2; exit 1; }; done

# --- processes we start, and their cleanup (also on failure or Ctrl-C) -------
SPID=""; TPID=""; RPID=""; STALLER=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$STALLER" ]; then kill "$STALLER" 2>/dev/null || true; fi
  if [ -n "$RPID" ]; then kill -CONT "$RPID" 2>/dev/null || true; kill -KILL "$RPID" 2>/dev/null || true; fi
  if [ -n "$TPID" ] && kill -0 "$TPID" 2>/dev/null; then kill "$TPID" 2>/dev/null || true; wait "$TPID" 2>/dev/null || true; fi
  if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
    kill -TERM "$SPID" 2>/dev/null || true
    # Graceful shutdown waits up to 10 s for open connections; don't wait longer.
    for _ in $(seq 1 60); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$SPID" 2>/dev/null || true
    wait "$SPID" 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "load.sh: interrupted" >&2; exit 130' INT TERM

# --- build ---------------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ "$build_catalog" = 1 ]; then
    echo "== building catalog (release)" >&2
    cargo build --release -p catalog
  fi
  echo "== building bench/load (release)" >&2
  CARGO_TARGET_DIR="$bench/load/target" cargo build --release --manifest-path "$bench/load/Cargo.toml"
fi
for b in "$CATALOG" "$LOAD"; do [ -x "$b" ] || { echo "load.sh: missing $b" >&2; exit 1; }; done

# Server on CPU 1, the tool on CPU 0 (as bench/run.sh), when there are two.
pin_server=(); pin_tool=()
if command -v taskset > /dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 1); pin_tool=(taskset -c 0); fi

mkdir -p "$RESULTS"
py_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# --- Redis (REDIS=1): a server of its own, to stall -------------------------------------
redis_args=()
if [ "$REDIS" = 1 ]; then
  command -v redis-server > /dev/null || { echo "load.sh: REDIS=1 needs redis-server on PATH" >&2; exit 1; }
  rport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no > "$RESULTS/redis.log" 2>&1 &
  RPID=$!
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$rport") 2>/dev/null && break; sleep 0.1; done
  redis_args=(--redis-url "redis://127.0.0.1:$rport/" --redis-prefix load:)
  echo "== redis-server pid $RPID on port $rport (stalled for $STALL_SECS s in the mixed run)" >&2
fi

# --- server ------------------------------------------------------------------------
echo "== starting $CATALOG --env prod on a free loopback port" >&2
: > "$RESULTS/server.out" # exists before the background child opens it
# shellcheck disable=SC2086 # SERVER_ARGS is a list of words
RUST_LOG=${RUST_LOG:-warn} "${pin_server[@]}" "$CATALOG" --env prod --listen 127.0.0.1:0 "${redis_args[@]}" $SERVER_ARGS \
  > "$RESULTS/server.out" 2> "$RESULTS/server.log" &
SPID=$!
addr=""
for _ in $(seq 1 150); do
  addr=$(sed -n 's|^listening on http://||p' "$RESULTS/server.out" | head -1)
  [ -n "$addr" ] && break
  kill -0 "$SPID" 2>/dev/null || break
  sleep 0.2
done
[ -n "$addr" ] || { echo "load.sh: the catalog did not start (see $RESULTS/server.log)" >&2; exit 1; }
echo "== server pid $SPID at $addr" >&2

# --- runs ----------------------------------------------------------------------------
common=(--addr "$addr" --pid "$SPID" --requests "$REQUESTS" --concurrency "$CONCURRENCY" --warmup "$WARMUP"
        --settle-secs "$SETTLE" --max-secs "$MAX_SECS" --client "$CLIENT")
[ -n "$TOKEN" ] && common+=(--token "$TOKEN")
# With a stalling Redis, sessions fail closed (503) while it stalls, by design: no session calls then.
[ "$REDIS" = 1 ] && common+=(--calls rpc.get,rpc.search,mcp.stateless)
hostile=(--invalid "$INVALID" --oversized "$OVERSIZED" --flood "$FLOOD" --auth "$AUTH" --slow "$SLOW"
         --slow-secs "$SLOW_SECS" --hostile-workers "$HOSTILE_WORKERS" --non-readers "$NON_READERS")
run_tool() { # MODE ARGS...
  local mode=$1; shift
  echo "== $mode run: $REQUESTS valid calls at concurrency $CONCURRENCY" >&2
  "${pin_tool[@]}" "$LOAD" --mode "$mode" "$@" --out "$RESULTS/$mode.json" 2> "$RESULTS/$mode.log" &
  TPID=$!
  local rc=0; wait "$TPID" || rc=$?
  TPID=""
  [ "$rc" = 0 ] || { echo "load.sh: the load tool failed in the $mode run (exit $rc):" >&2; cat "$RESULTS/$mode.log" >&2; }
}
t0=$(date +%s)
run_tool clean "${common[@]}"
if [ "$REDIS" = 1 ]; then
  # The stall: a second into the mixed run, for STALL_SECS.
  ( sleep 1; kill -STOP "$RPID"; echo "redis stopped at $(date -u +%T)" >> "$RESULTS/redis.log"
    sleep "$STALL_SECS"; kill -CONT "$RPID"; echo "redis resumed at $(date -u +%T)" >> "$RESULTS/redis.log" ) &
  STALLER=$!
fi
if kill -0 "$SPID" 2>/dev/null; then run_tool mixed "${common[@]}" "${hostile[@]}"; fi
if [ -n "$STALLER" ]; then wait "$STALLER" 2>/dev/null || true; STALLER=""; fi
t1=$(date +%s)

alive=true; status=null
if ! kill -0 "$SPID" 2>/dev/null; then
  alive=false; status=0; wait "$SPID" || status=$?; SPID=""
fi
panics=$(grep -ci 'panick' "$RESULTS/server.log" || true)

{
  echo "{"
  echo "  \"started_utc\": $(py_str "$started"), \"preset\": $(py_str "$preset"), \"load_wall_s\": $((t1 - t0)),"
  echo "  \"kernel\": $(py_str "$(uname -sr)"),"
  echo "  \"cpu\": $(py_str "$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"), \"cpus\": $(nproc),"
  echo "  \"pinned\": $( [ ${#pin_tool[@]} -gt 0 ] && echo true || echo false),"
  echo "  \"rustc\": $(py_str "$(rustc --version 2>/dev/null || echo unknown)"),"
  echo "  \"git_rev\": $(py_str "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"),"
  echo "  \"git_dirty\": $( [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo true || echo false),"
  echo "  \"server_args\": $(py_str "$SERVER_ARGS"), \"token\": $( [ -n "$TOKEN" ] && echo true || echo false),"
  echo "  \"settle_secs\": $SETTLE, \"client\": $(py_str "$CLIENT"),"
  echo "  \"server_alive_at_end\": $alive, \"server_exit_status\": $status, \"server_log_panics\": $panics,"
  echo "  \"redis\": $( [ "$REDIS" = 1 ] && echo true || echo false), \"redis_stall_secs\": $( [ "$REDIS" = 1 ] && echo "$STALL_SECS" || echo 0), \"non_readers\": $NON_READERS,"
  echo "  \"limits\": {\"rss_slack_mib\": $RSS_SLACK_MIB, \"rss_slack_pct\": $RSS_SLACK_PCT, \"fd_slack\": $FD_SLACK, \"peak_slack_mib\": $PEAK_SLACK_MIB}"
  echo "}"
} > "$RESULTS/meta.json"

rc=0; python3 "$bench/load_report.py" "$RESULTS" || rc=$?
echo "results: $RESULTS" >&2
exit "$rc"
