#!/usr/bin/env bash
# bench/escape_cost.sh BINARY — what writing a tool's result as MCP's text
# content costs: the instructions `rpc_core::jsonrpc::write_json_string`
# takes for the 2.3 KB result of `Catalog.search` with 100 products (as
# `content[0].text` of an uncached call, or of a cached call's first hit).
#
# Starts the catalog (BINARY, e.g. target/release/catalog) to fetch that
# result, builds a scratch program against this checkout's rpc-core (in
# $ESCAPE_WORK, default /tmp/escape-cost) that escapes it 1,000 and 3,000
# times, and prints the difference per escape under callgrind (start-up
# cancels out). Needs valgrind and curl; the first build takes about 2 minutes.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$bench/.." && pwd)
BIN=$1; PORT=${PORT:-18796}; WORK=${ESCAPE_WORK:-/tmp/escape-cost}
mkdir -p "$WORK/src"
RUST_LOG=warn "$BIN" --env test --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
curl -sS -X POST "http://127.0.0.1:$PORT/rpc" -H 'content-type: application/json' \
  --data-binary '{"jsonrpc":"2.0","id":1,"method":"Catalog.search","params":{"query":"n","limit":100}}' \
  | python3 -c 'import json,sys; sys.stdout.write(json.dumps(json.load(sys.stdin)["result"], separators=(",", ":"), ensure_ascii=False))' \
  > "$WORK/sample.json"
cat > "$WORK/Cargo.toml" <<TOML
[package]
name = "escape-cost"
version = "0.1.0"
edition = "2024"
[dependencies]
rpc-core = { path = "$repo/rpc-core" }
[workspace]
TOML
cat > "$WORK/src/main.rs" <<'RUST'
fn main() {
    let text = std::fs::read_to_string(std::env::args().nth(1).expect("a sample")).expect("the sample");
    let times: usize = std::env::args().nth(2).and_then(|n| n.parse().ok()).expect("a count");
    let (mut out, mut total) = (Vec::with_capacity(2 * text.len() + 2), 0);
    for _ in 0..times {
        out.clear();
        rpc_core::jsonrpc::write_json_string(&mut out, std::hint::black_box(&text));
        total += out.len();
    }
    println!("{total}");
}
RUST
CARGO_TARGET_DIR="$WORK/target" cargo build -q --release --manifest-path "$WORK/Cargo.toml"
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$WORK/target/release/escape-cost" "$WORK/sample.json" "$1" 2>&1 \
    | awk '/refs:/ {gsub(",", "", $NF); print $NF}'
}
low=$(count 1000); high=$(count 3000)
bytes=$(wc -c < "$WORK/sample.json"); quotes=$(tr -cd '"' < "$WORK/sample.json" | wc -c)
echo "escape_cost.sh: $bytes bytes ($quotes quotes): $(( (high - low) / 2000 )) instructions per escape"
