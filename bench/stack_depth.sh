#!/usr/bin/env bash
# bench/stack_depth.sh BINARY [2026|session|rpc] — how deep a call's stack is:
# starts the catalog (BINARY, e.g. target/release/catalog) on one worker
# thread, sends a cached `Catalog.get` call of that kind once a second, stops
# the server with gdb where the executor looks up its cache, and prints every
# frame on the way: its depth below that point and its size in bytes.
#
# A frame is what the function reserves whether or not a call uses it: an
# `async` block that awaits another has the other's poll inlined, with room
# for every branch of both. Frames kilobytes deep spread a request's data over
# more cache lines than the first-level data cache holds (BENCHMARKS.md,
# run 25). Needs gdb and curl.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
BIN=$1; KIND=${2:-2026}; PORT=${PORT:-18797}
BREAK='^rpc_core::executor::cache::.*cache_lookup'
RUST_LOG=warn TOKIO_WORKER_THREADS=1 "$BIN" --env prod --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVER=$!
LOOP=
trap 'kill $SERVER $LOOP 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}'
case $KIND in
  2026)
    path=/mcp/v1
    H+=(-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: Catalog.get')
    CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"stack","version":"1"}}}}' ;;
  session)
    path=/mcp/v1
    sid=$(curl -sS -D - -o /dev/null -X POST "$URL$path" "${H[@]}" --data-binary \
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stack","version":"1"}}}' \
      | awk -F': *' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r\n')
    H+=(-H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25')
    curl -sS -o /dev/null -X POST "$URL$path" "${H[@]}" --data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' ;;
  rpc)
    path=/rpc; CALL='{"jsonrpc":"2.0","id":1,"method":"Catalog.get","params":{"id":7}}' ;;
  *) echo "stack_depth.sh: kind is 2026, session or rpc" >&2; exit 2 ;;
esac
call() { curl -sS -o /dev/null -X POST "$URL$path" "${H[@]}" --data-binary "$CALL"; }
call; call  # the cache holds the result from now on
(for _ in $(seq 1 60); do sleep 1; call; done) &
LOOP=$!
echo "  depth   size  function (innermost first; $KIND call, $BIN)"
timeout 120 gdb -q -p "$SERVER" -batch -ex "set pagination off" -ex "source $bench/stack_frames.py" \
  -ex "rbreak $BREAK" -ex continue -ex stackframes 2>&1 | grep -E '^ +-?[0-9]+ +-?[0-9]+ ' | head -30
