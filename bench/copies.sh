#!/usr/bin/env bash
# bench/copies.sh — the memory copies of a session `tools/call` in the catalog:
# how many per request, how large, and which code makes them (bench/copies.py).
#
# Builds the profiling copy bench/profile.sh uses (release + debuginfo + frame
# pointers, in /tmp/mcp-prof-target), puts a uprobe on libc's memmove that
# records its length, drives the server with wrk at c=4 and records the probe
# with DWARF call graphs for COPIES_SECONDS (2). Needs root (uprobes), perf, wrk.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$bench/.." && pwd); cd "$repo"
PORT=${PORT:-8131}; SECS=${COPIES_SECONDS:-2}; OUT=${COPIES_OUT:-/tmp/mcp-copies}; mkdir -p "$OUT"
export CARGO_PROFILE_RELEASE_DEBUG=1 RUSTFLAGS="-C force-frame-pointers=yes"
CARGO_TARGET_DIR=/tmp/mcp-prof-target cargo build --release -p catalog >&2
BIN=/tmp/mcp-prof-target/release/catalog
LIBC=$(ldd "$BIN" | awk '/libc\.so/{print $3}')
# glibc picks its memmove for the CPU at start-up: a probe on each variant
# this libc has (by symbol), so whichever the server uses is recorded.
perf probe -q -d 'probe_libc:mm*' 2>/dev/null || true
probes=0
for variant in avx512_unaligned_erms evex_unaligned_erms avx_unaligned_erms sse2_unaligned_erms \
  avx512_unaligned evex_unaligned avx_unaligned sse2_unaligned; do
  perf probe -q -x "$LIBC" -a "mm$probes=__memmove_$variant len=%dx:u64" 2>/dev/null && probes=$((probes + 1))
done
[ "$probes" -gt 0 ] || { echo "copies.sh: no memmove variant of $LIBC could be probed" >&2; exit 1; }
RUST_LOG=warn taskset -c 1 "$BIN" --env prod --listen "127.0.0.1:$PORT" > "$OUT/server.log" 2>&1 &
SPID=$!; trap 'kill $SPID 2>/dev/null || true; perf probe -q -d "probe_libc:mm*" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT/mcp/v1
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
MCP_SESSION_ID=$(curl -sS -D - -o /dev/null -X POST "$URL" "${H[@]}" --data-binary \
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  | awk -F': *' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r\n')
export MCP_SESSION_ID BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}'
# Each response is one `writev`: recorded beside the copies, it counts the
# requests of the sample exactly.
taskset -c 0 wrk -t1 -c4 -d$((SECS + 3))s -s "$bench/call.lua" "$URL" > "$OUT/wrk.txt" 2>&1 &
WPID=$!
sleep 1
perf record -q -e 'probe_libc:mm*' -e syscalls:sys_enter_writev --call-graph dwarf,1024 -p "$SPID" -o "$OUT/copies.data" -- sleep "$SECS" 2> "$OUT/record.log"
wait $WPID
perf script -i "$OUT/copies.data" 2>/dev/null > "$OUT/copies.txt"
python3 "$bench/copies.py" "$OUT/copies.txt" "$BIN" | tee "$OUT/copies.md"
