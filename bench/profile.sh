#!/usr/bin/env bash
# bench/profile.sh [ours|baseline] — where the server's CPU time goes under load.
#
# Builds a profiling copy (release + debuginfo + frame pointers, in
# /tmp/mcp-prof-target so target/ is untouched), runs it pinned to CPU 1,
# drives it with wrk at c=32 (CPU 0) and samples it with `perf record`
# (software cpu-clock event, so it works in VMs without hardware counters).
# Writes $PROF_OUT/{perf.data,report.txt,children.txt} and, for ours,
# breakdown.md (time per request of each step of our path, perf_breakdown.py).
#   PROF_SECONDS=15  sampling time; PROF_FREQ=4999 samples/s; PORT=8121; PROF_C=32 connections
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$bench/.." && pwd); cd "$repo"
WHAT=${1:-ours}; PORT=${PORT:-8121}; SECS=${PROF_SECONDS:-15}; FREQ=${PROF_FREQ:-4999}
PROF_OUT=${PROF_OUT:-/tmp/mcp-prof/$WHAT}; mkdir -p "$PROF_OUT"
command -v perf > /dev/null || { echo "profile.sh: needs perf (apt-get install linux-perf)" >&2; exit 1; }
export CARGO_PROFILE_RELEASE_DEBUG=1 RUSTFLAGS="-C force-frame-pointers=yes"
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}'
case $WHAT in
  ours)
    CARGO_TARGET_DIR=/tmp/mcp-prof-target cargo build --release -p catalog >&2
    RUST_LOG=warn taskset -c 1 /tmp/mcp-prof-target/release/catalog --env prod --listen "127.0.0.1:$PORT" > "$PROF_OUT/server.log" 2>&1 &
    URL=http://127.0.0.1:$PORT/mcp/v1 ;;
  baseline)
    CARGO_TARGET_DIR=/tmp/mcp-prof-target-base cargo build --release --manifest-path "$bench/baseline/Cargo.toml" >&2
    PORT=$PORT taskset -c 1 /tmp/mcp-prof-target-base/release/bench-baseline > "$PROF_OUT/server.log" 2>&1 &
    URL=http://127.0.0.1:$PORT/mcp ;;
  *) echo "usage: bench/profile.sh [ours|baseline]" >&2; exit 2 ;;
esac
SPID=$!; trap 'kill $SPID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
export MCP_SESSION_ID=
if [ "$WHAT" = ours ]; then
  MCP_SESSION_ID=$(curl -sS -D - -o /dev/null -X POST "$URL" "${H[@]}" --data-binary \
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
    | awk -F': *' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r\n')
fi
export BODY=$CALL
taskset -c 0 wrk -t1 -c"${PROF_C:-32}" -d$((SECS + 5))s -s "$bench/call.lua" "$URL" > "$PROF_OUT/wrk.txt" 2>&1 &
WPID=$!
sleep 2
taskset -c 0 perf record -e cpu-clock -F "$FREQ" -g -p "$SPID" -o "$PROF_OUT/perf.data" -- sleep "$SECS" 2> "$PROF_OUT/record.log"
wait $WPID
perf report -i "$PROF_OUT/perf.data" --no-children --percent-limit 0.4 --stdio -g none --sort symbol 2>/dev/null > "$PROF_OUT/report.txt"
perf report -i "$PROF_OUT/perf.data" --children --percent-limit 1 --stdio -g none --sort symbol 2>/dev/null > "$PROF_OUT/children.txt"
if [ "$WHAT" = ours ]; then
  perf script -i "$PROF_OUT/perf.data" 2>/dev/null > "$PROF_OUT/script.txt"
  RPS=$(awk '/Requests\/sec/{print $2}' "$PROF_OUT/wrk.txt")
  python3 "$bench/perf_breakdown.py" "$PROF_OUT/script.txt" /tmp/mcp-prof-target/release/catalog "$RPS" "$FREQ" "$SECS" | tee "$PROF_OUT/breakdown.md"
fi
echo "profile: $PROF_OUT (report.txt = self time, children.txt = inclusive time, breakdown.md)" >&2
