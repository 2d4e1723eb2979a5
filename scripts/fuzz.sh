#!/usr/bin/env bash
# Fuzzes the JSON-RPC parser and both endpoints of the catalog example for a
# bounded time, then replays the committed corpus and regressions on the
# stable toolchain. Exits non-zero on any crash (a panic, a malformed
# response, a hang, an oversize response) or replay failure; the crashing
# input is left in fuzz/artifacts/<target>/ (copy it to
# fuzz/regressions/<target>/ once fixed).
#
#   scripts/fuzz.sh [SECONDS]     SECONDS per target (default 60)
#
# The targets run side by side (one libFuzzer process each, so the wall time
# is about SECONDS whatever their number). The build (profile `fuzz`, feature
# `libfuzzer`) instruments the workspace's own crates for libFuzzer's
# coverage through scripts/fuzz_rustc.sh (the flags `cargo fuzz build
# --sanitizer none` passes) and leaves the dependencies alone: no cargo-fuzz,
# no nightly; about 10 minutes cold on 2 cores. No sanitizer: safe Rust.
#
# Environment: FUZZ_TARGETS (default: all four), FUZZ_TARGET_DIR (the
# build's target directory, default the workspace's; the targets land in
# <dir>/fuzz/), FUZZ_TOOLCHAIN (a rustup toolchain name), FUZZ_REPLAY=0 (skip
# the replay: `cargo test --workspace` runs it too).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

seconds=${1:-60}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2; }
read -r -a targets <<<"${FUZZ_TARGETS:-jsonrpc_message mcp_request rpc_request stdio_lines}"
target_dir=${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}}
toolchain=()
[[ -n ${FUZZ_TOOLCHAIN:-} ]] && toolchain=("+$FUZZ_TOOLCHAIN")

# libFuzzer limits: inputs up to 8 KiB (bodies grow past the 4 MiB limit from
# a few bytes), 10 s per input (a response that never ends is seen at once
# under the harness's paused clock: this catches busy loops), 2 GiB of memory.
libfuzzer_flags=(-max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

step() { printf '\n=== %s\n' "$*"; }
started=$SECONDS

# Background jobs, each the leader of its own process group (setsid), so an
# early exit ends them with everything they started (libFuzzer).
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "toolchain"
cargo "${toolchain[@]}" --version

step "building the fuzz targets (profile fuzz, our crates instrumented)"
mkdir -p "$target_dir"
log=$target_dir/fuzz-build.log
# Every target in one build (they share the library); quiet unless it fails.
if ! RUSTC_WRAPPER="$root/scripts/fuzz_rustc.sh" cargo "${toolchain[@]}" build --locked -p rpc-fuzz --bins \
  --features libfuzzer --profile fuzz --target-dir "$target_dir" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "scripts/fuzz.sh: the fuzz build failed ($log)" >&2
  exit 1
fi
printf 'built in %ds\n' $((SECONDS - started))

step "fuzzing ${targets[*]} for ${seconds}s each"
bin_dir=$target_dir/fuzz
logs=$target_dir/fuzz-logs
mkdir -p "$logs"
for t in "${targets[@]}"; do
  # New inputs go to a work corpus under the target directory; the committed
  # seeds are read, never written.
  work=$target_dir/corpus/$t
  mkdir -p "$work" "fuzz/artifacts/$t"
  dict=()
  [[ -f fuzz/dict/$t.dict ]] && dict=(-dict="fuzz/dict/$t.dict")
  setsid timeout --kill-after=10 $((seconds + 120)) "$bin_dir/$t" "$work" "fuzz/corpus/$t" \
    "${libfuzzer_flags[@]}" "${dict[@]}" -artifact_prefix="fuzz/artifacts/$t/" >"$logs/$t.log" 2>&1 &
  pids+=("$!")
done
failed=()
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    printf '%-16s %s\n' "$t" "$(grep -E '^(stat::number_of_executed_units|#[0-9]+.*DONE)' "$logs/$t.log" | tail -n 1)"
  else
    failed+=("$t")
    printf '%-16s FAILED (log: %s)\n' "$t" "$logs/$t.log"
    grep -E -A 30 'panicked|ERROR: libFuzzer|deadly signal|timeout|out-of-memory' "$logs/$t.log" | head -n 60 || tail -n 40 "$logs/$t.log"
    ls -1 "fuzz/artifacts/$t" | sed 's/^/  artifact: fuzz\/artifacts\/'"$t"'\//'
  fi
done
pids=()

if [[ ${FUZZ_REPLAY:-1} == 0 ]]; then
  step "replay skipped (FUZZ_REPLAY=0: \`cargo test --workspace\` runs it)"
elif step "replaying the corpus and regressions (cargo test -p rpc-fuzz)" &&
  cargo test --locked -p rpc-fuzz >"$logs/replay.log" 2>&1; then
  grep -m 1 'test result' "$logs/replay.log"
else
  failed+=("replay")
  grep -E -A 20 'panicked|FAILED|error' "$logs/replay.log" | head -n 60
fi

step "done in $((SECONDS - started))s"
if ((${#failed[@]})); then
  echo "scripts/fuzz.sh: failures: ${failed[*]}" >&2
  exit 1
fi
echo "no crash"
