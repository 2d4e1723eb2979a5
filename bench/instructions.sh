#!/usr/bin/env bash
# bench/instructions.sh — user-space instructions per MCP tools/call, counted
# by valgrind's callgrind: a deterministic A/B measure (run to run within
# about 1 %), where wall-clock throughput on a shared VM moves by ±10 %.
# It sees user space only: system calls and the kernel's network stack are
# not counted (they are the same for every server here: one read and one
# writev per request).
#
#   bench/instructions.sh                      baseline, ours (session), stateless
#   CANDIDATE=/path/to/catalog bench/instructions.sh   also another build
#   TOOL=ping ARGS='{"who":"x"}' bench/instructions.sh   another tool
#
# Each server runs under callgrind; wrk (c=4) warms it for 3 s, then counting
# is switched on for 6 s of load and the total is divided by the number of
# requests wrk completed. Output: one line per server, and
# $RESULTS/instructions.txt when RESULTS is set.
# Needs valgrind (apt-get install valgrind), wrk, curl.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$bench/.." && pwd)
cd "$repo"

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
for t in valgrind wrk; do
  if ! command -v "$t" > /dev/null; then
    echo "== installing $t (apt)" >&2
    sudo_ apt-get update -qq && sudo_ apt-get install -y -qq "$t"
  fi
done
command -v callgrind_control > /dev/null || { echo "instructions.sh: callgrind_control is missing (valgrind)" >&2; exit 1; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release -p catalog >&2
  CARGO_TARGET_DIR="$bench/baseline/target" cargo build --release --manifest-path "$bench/baseline/Cargo.toml" >&2
fi
TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
CATALOG=$TARGET_DIR/release/catalog
BASELINE=$bench/baseline/target/release/bench-baseline
CANDIDATE=${CANDIDATE:-}
LUA=$bench/call.lua
work=$(mktemp -d)
# KEEP=1 keeps the callgrind outputs (callgrind_annotate $work/NAME.out).
if [ "${KEEP:-0}" = 1 ]; then echo "instructions.sh: outputs kept in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi

# The tool called: TOOL=ping ARGS='{"who":"x"}' measures a method without a
# cache (Catalog.get is cached in prod: the default measures cache hits).
TOOL=${TOOL:-Catalog.get}
ARGS=${ARGS:-'{"id":7}'}
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'$TOOL'","arguments":'$ARGS'}}'
STATELESS_CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'$TOOL'","arguments":'$ARGS',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'
STATELESS_HEADERS="MCP-Protocol-Version: 2026-07-28|Mcp-Method: tools/call|Mcp-Name: $TOOL"

# count NAME PORT PATH MODE(session|stateless|plain) -- CMD...
count() {
  local name=$1 port=$2 path=$3 mode=$4; shift 5
  local out=$work/$name.cg
  # The script's own variables stay out of the server's environment (the
  # catalog reads `MCP_*` variables as settings).
  env -u MCP_SESSION_ID PORT=$port RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out" --instr-atstart=no \
    "$@" > "$work/$name.log" 2>&1 &
  local pid=$!
  local url=http://127.0.0.1:$port$path
  for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.3; done
  export BODY=$CALL HEADERS= MCP_SESSION_ID=
  case $mode in
    session)
      MCP_SESSION_ID=$(curl -sS -D - -o /dev/null -X POST "$url" -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' \
        --data-binary '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' |
        awk -F': *' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r\n')
      [ -n "$MCP_SESSION_ID" ] || { echo "instructions.sh: $name: no session" >&2; kill "$pid"; return 1; }
      ;;
    stateless) BODY=$STATELESS_CALL HEADERS=$STATELESS_HEADERS ;;
  esac
  wrk -t1 -c4 -d3s -s "$LUA" "$url" > /dev/null 2>&1
  callgrind_control -i on "$pid" > /dev/null 2>&1
  local n
  n=$(wrk -t1 -c4 -d6s -s "$LUA" "$url" 2>&1 | awk '/requests in/{print $1}')
  callgrind_control -i off "$pid" > /dev/null 2>&1
  callgrind_control -d "$pid" > /dev/null 2>&1
  sleep 0.5
  kill "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  local total
  total=$(awk '/^totals:/{print $2}' "$out".1)
  [ -n "$n" ] && [ "$n" -gt 0 ] && [ -n "$total" ] || { echo "instructions.sh: $name: no measurement" >&2; return 1; }
  printf '%-20s %8d instructions per call (%d calls)\n' "$name" $((total / n)) "$n"
}

{
  echo "# user-space instructions per tools/call of $TOOL (callgrind), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
  count baseline 8310 /mcp plain -- "$BASELINE"
  count baseline-stateless 8311 /mcp stateless -- "$BASELINE"
  count ours 8312 /mcp/v1 session -- "$CATALOG" --env prod --listen 127.0.0.1:8312
  count stateless 8313 /mcp/v1 stateless -- "$CATALOG" --env prod --listen 127.0.0.1:8313
  if [ -n "$CANDIDATE" ]; then
    count candidate 8314 /mcp/v1 session -- "$CANDIDATE" --env prod --listen 127.0.0.1:8314
    count candidate-stateless 8315 /mcp/v1 stateless -- "$CANDIDATE" --env prod --listen 127.0.0.1:8315
  fi
} | tee "$work/instructions.txt"
if [ -n "${RESULTS:-}" ]; then mkdir -p "$RESULTS" && cp "$work/instructions.txt" "$RESULTS/"; fi
