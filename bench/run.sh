#!/usr/bin/env bash
# bench/run.sh — MCP tools/call throughput and latency, ours vs a bare-hyper
# baseline (and the rmcp peer when ../shared/bench/peers exists), all measured
# in the same run. See BENCHMARKS.md for the method and the latest figures.
#
#   bench/run.sh            build everything, measure, write bench/results/<stamp>/
#
# Environment knobs:
#   ROUNDS=2      rounds; each round runs every server once (servers interleave,
#                 so slow drift of the machine hits all of them alike)
#   REPEATS=2     measured runs per concurrency per round (see run_one.sh)
#   WARMUP=3 DURATION=10 CONCURRENCY="1 32"   passed to run_one.sh
#   PEERS_DIR     the shared peer kit (default: <repo>/../shared/bench/peers);
#                 NO_PEER=1 skips rmcp even when it exists
#   PEER_TARGET_DIR=/tmp/peer-target   where the peers are built
#   RESULTS       output directory (default bench/results/<UTC stamp>)
#   SKIP_BUILD=1  use the binaries already built
#   CANDIDATE=/path/to/catalog   also measure another build of the catalog
#                 (e.g. a branch with a performance change) as row "candidate",
#                 interleaved with the others, in both eras (rows "candidate"
#                 and "candidate-stateless"): an A/B test in one run
# Output: $RESULTS/results.jsonl (one line per measured run), meta.json,
# summary.md (medians and ratios, from summarize.py), rejected.jsonl (runs
# disturbed by other processes, redone), server logs, the binaries measured.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$bench/.." && pwd)
cd "$repo"

ROUNDS=${ROUNDS:-2}
export REPEATS=${REPEATS:-2} WARMUP=${WARMUP:-3} DURATION=${DURATION:-10} CONCURRENCY=${CONCURRENCY:-1 32}
PEERS_DIR=${PEERS_DIR:-$repo/../shared/bench/peers}
PEER_TARGET_DIR=${PEER_TARGET_DIR:-/tmp/peer-target}
RESULTS=${RESULTS:-$bench/results/$(date -u +%Y%m%dT%H%M%SZ)}
TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
BASE_PORT=${BASE_PORT:-8110}; OURS_PORT=${OURS_PORT:-8111}; RMCP_PORT=${RMCP_PORT:-8112}; CAND_PORT=${CAND_PORT:-8113}
STATELESS_PORT=${STATELESS_PORT:-8114}; RPC_PORT=${RPC_PORT:-8115}
CANDIDATE=${CANDIDATE:-}
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}'
ADD='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}'
# The same call as a 2026-07-28 client sends it: no session, the envelope in
# _meta, the mirrored headers.
STATELESS_CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'
STATELESS_HEADERS='MCP-Protocol-Version: 2026-07-28|Mcp-Method: tools/call|Mcp-Name: Catalog.get'
# The same method over JSON-RPC at /rpc (no MCP around it).
RPC_CALL='{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}'

peer=0
if [ "${NO_PEER:-0}" != 1 ] && [ -f "$PEERS_DIR/Cargo.toml" ]; then peer=1; fi

# --- tools -----------------------------------------------------------------
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v wrk > /dev/null; then
  echo "== installing wrk (apt)" >&2
  sudo_ apt-get update -qq && sudo_ apt-get install -y -qq wrk
fi
for t in taskset curl python3; do command -v "$t" > /dev/null || { echo "run.sh: needs $t" >&2; exit 1; }; done
[ "$(nproc)" -ge 2 ] || { echo "run.sh: needs 2 CPUs (server on CPU 1, wrk on CPU 0)" >&2; exit 1; }

# --- build -----------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== building catalog (release)" >&2
  cargo build --release -p catalog
  echo "== building bench/baseline (release)" >&2
  CARGO_TARGET_DIR="$bench/baseline/target" cargo build --release --manifest-path "$bench/baseline/Cargo.toml"
  if [ "$peer" = 1 ]; then
    echo "== building peers in $PEERS_DIR (release)" >&2
    CARGO_TARGET_DIR="$PEER_TARGET_DIR" cargo build --release --manifest-path "$PEERS_DIR/Cargo.toml"
  fi
fi
CATALOG=$TARGET_DIR/release/catalog
BASELINE=$bench/baseline/target/release/bench-baseline
RMCP=$PEER_TARGET_DIR/release/rmcp_srv
for b in "$CATALOG" "$BASELINE"; do [ -x "$b" ] || { echo "run.sh: missing $b" >&2; exit 1; }; done
if [ "$peer" = 1 ] && [ ! -x "$RMCP" ]; then echo "run.sh: missing $RMCP, skipping rmcp" >&2; peer=0; fi

# --- metadata --------------------------------------------------------------
mkdir -p "$RESULTS/bin"
# Freeze the binaries: a rebuild of target/ during the run must not change
# what later rounds measure.
cp "$CATALOG" "$RESULTS/bin/catalog"; cp "$BASELINE" "$RESULTS/bin/baseline"
CATALOG=$RESULTS/bin/catalog BASELINE=$RESULTS/bin/baseline
if [ "$peer" = 1 ]; then cp "$RMCP" "$RESULTS/bin/rmcp_srv"; RMCP=$RESULTS/bin/rmcp_srv; fi
CANDIDATE_SRC=$CANDIDATE
if [ -n "$CANDIDATE" ]; then cp "$CANDIDATE" "$RESULTS/bin/candidate"; CANDIDATE=$RESULTS/bin/candidate; fi
(cd "$RESULTS/bin" && sha256sum ./* > SHA256SUMS)
git status --porcelain > "$RESULTS/git-status.txt" 2>/dev/null || true
export OUT=$RESULTS/results.jsonl LOGDIR=$RESULTS
: > "$OUT"
py_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
{
  echo "{"
  echo "  \"started_utc\": $(py_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),"
  echo "  \"kernel\": $(py_str "$(uname -sr)"),"
  echo "  \"cpu\": $(py_str "$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"),"
  echo "  \"cpus\": $(nproc),"
  echo "  \"mem_total_kib\": $(awk '/^MemTotal/{print $2}' /proc/meminfo),"
  echo "  \"rustc\": $(py_str "$(rustc --version)"),"
  echo "  \"wrk\": $(py_str "$(wrk -v 2>&1 | head -1)"),"
  echo "  \"git_rev\": $(py_str "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"),"
  echo "  \"git_dirty\": $( [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo true || echo false),"
  echo "  \"rounds\": $ROUNDS, \"repeats\": $REPEATS, \"warmup_s\": $WARMUP, \"duration_s\": $DURATION,"
  echo "  \"concurrency\": $(py_str "$CONCURRENCY"), \"rmcp\": $( [ "$peer" = 1 ] && echo true || echo false),"
  echo "  \"candidate\": $(py_str "$CANDIDATE_SRC")"
  echo "}"
} > "$RESULTS/meta.json"

# --- measure ---------------------------------------------------------------
for round in $(seq 1 "$ROUNDS"); do
  export ROUND=$round
  echo "== round $round/$ROUNDS: baseline (bare hyper)" >&2
  PORT=$BASE_PORT BODY=$CALL MCP_INIT=0 EXPECT='"isError":false' \
    "$bench/run_one.sh" baseline "http://127.0.0.1:$BASE_PORT/mcp" -- "$BASELINE"
  echo "== round $round/$ROUNDS: baseline, fed the 2026-07-28 request (bare hyper)" >&2
  PORT=$BASE_PORT BODY=$STATELESS_CALL HEADERS=$STATELESS_HEADERS MCP_INIT=0 EXPECT='"resultType":"complete"' \
    "$bench/run_one.sh" baseline-stateless "http://127.0.0.1:$BASE_PORT/mcp" -- "$BASELINE"
  echo "== round $round/$ROUNDS: baseline, fed the /rpc call (bare hyper)" >&2
  PORT=$BASE_PORT BODY=$RPC_CALL MCP_INIT=0 EXPECT='"result":{"id":7' \
    "$bench/run_one.sh" baseline-rpc "http://127.0.0.1:$BASE_PORT/rpc" -- "$BASELINE"
  echo "== round $round/$ROUNDS: ours (catalog --env prod)" >&2
  RUST_LOG=warn BODY=$CALL MCP_INIT=1 EXPECT='"isError":false' \
    "$bench/run_one.sh" ours "http://127.0.0.1:$OURS_PORT/mcp/v1" -- "$CATALOG" --env prod --listen "127.0.0.1:$OURS_PORT"
  echo "== round $round/$ROUNDS: ours, 2026-07-28 stateless (catalog --env prod)" >&2
  RUST_LOG=warn BODY=$STATELESS_CALL HEADERS=$STATELESS_HEADERS MCP_INIT=0 EXPECT='"resultType":"complete"' \
    "$bench/run_one.sh" stateless "http://127.0.0.1:$STATELESS_PORT/mcp/v1" -- "$CATALOG" --env prod --listen "127.0.0.1:$STATELESS_PORT"
  echo "== round $round/$ROUNDS: ours, /rpc (catalog --env prod)" >&2
  RUST_LOG=warn BODY=$RPC_CALL MCP_INIT=0 EXPECT='"result":{"id":7' \
    "$bench/run_one.sh" rpc "http://127.0.0.1:$RPC_PORT/rpc" -- "$CATALOG" --env prod --listen "127.0.0.1:$RPC_PORT"
  if [ -n "$CANDIDATE" ]; then
    echo "== round $round/$ROUNDS: candidate ($CANDIDATE)" >&2
    RUST_LOG=warn BODY=$CALL MCP_INIT=1 EXPECT='"isError":false' \
      "$bench/run_one.sh" candidate "http://127.0.0.1:$CAND_PORT/mcp/v1" -- "$CANDIDATE" --env prod --listen "127.0.0.1:$CAND_PORT"
    echo "== round $round/$ROUNDS: candidate, 2026-07-28 stateless ($CANDIDATE)" >&2
    RUST_LOG=warn BODY=$STATELESS_CALL HEADERS=$STATELESS_HEADERS MCP_INIT=0 EXPECT='"resultType":"complete"' \
      "$bench/run_one.sh" candidate-stateless "http://127.0.0.1:$CAND_PORT/mcp/v1" -- "$CANDIDATE" --env prod --listen "127.0.0.1:$CAND_PORT"
  fi
  if [ "$peer" = 1 ]; then
    echo "== round $round/$ROUNDS: rmcp (peer, stateless JSON)" >&2
    PORT=$RMCP_PORT BODY=$ADD MCP_INIT=0 EXPECT='"isError":false' \
      "$bench/run_one.sh" rmcp "http://127.0.0.1:$RMCP_PORT/mcp" -- "$RMCP"
  fi
done

python3 "$bench/summarize.py" "$RESULTS" > "$RESULTS/summary.md"
cat "$RESULTS/summary.md"
echo "results: $RESULTS" >&2
