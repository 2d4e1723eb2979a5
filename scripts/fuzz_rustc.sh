#!/usr/bin/env bash
# RUSTC_WRAPPER of scripts/fuzz.sh: adds libFuzzer's coverage instrumentation
# (the flags `cargo fuzz build --sanitizer none` passes) to the workspace's
# own crates only. The dependencies build as usual, uninstrumented: a shorter
# build, and coverage where our code decides.
#
#   RUSTC_WRAPPER=scripts/fuzz_rustc.sh cargo build ...
#
# FUZZ_INSTRUMENT: the crate names to instrument (default: the core, HTTP and
# MCP layer, the catalog example, the harnesses and the targets). Cargo
# does not see these flags: after changing it, `cargo clean --profile fuzz`.
set -euo pipefail
rustc=$1
shift
name=
prev=
for arg in "$@"; do
  if [[ $prev == --crate-name ]]; then
    name=$arg
    break
  fi
  prev=$arg
done
case " ${FUZZ_INSTRUMENT:-rpc_core rpc_http rpc mcp catalog rpc_fuzz jsonrpc_message mcp_request rpc_request} " in
*" $name "*)
  exec "$rustc" "$@" -Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares \
    -Cllvm-args=-sanitizer-coverage-stack-depth
  ;;
esac
exec "$rustc" "$@"
