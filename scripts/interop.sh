#!/usr/bin/env bash
# Interoperability checks with official MCP implementations:
#   1. builds the catalog and conformance-server examples,
#   2. starts each on a free loopback port,
#   3. runs scripts/interop/python_client.py (official Python SDK, mcp==2.3.0)
#      against the catalog's /mcp/v1 in each of its modes: legacy (handshake),
#      auto (discovers 2026-07-28) and pinned 2026-07-28, then
#      scripts/interop/python_stdio.py: the same checks with the SDK starting
#      `catalog --stdio` itself (StdioServerParameters), in the same modes,
#   4. runs scripts/interop/python_oauth.py: the catalog as an OAuth 2.1 resource
#      server (--oauth-issuer/--oauth-audience/--oauth-scope) of
#      scripts/interop/oauth_as.py, a test authorization server: bearer
#      challenges, RFC 9728 metadata and refused tokens (tampered, another
#      audience or issuer, expired, a missing scope) over plain HTTP, then the
#      SDK's own OAuth client (discovery, dynamic registration, authorization
#      code + PKCE, RFC 8707 resource, refresh) calling tools, in each mode,
#   5. runs scripts/interop/ts_client.mjs (official TypeScript SDK,
#      @modelcontextprotocol/sdk 1.32.2, handshake era) against the catalog's
#      /mcp/v1 and starting `catalog --stdio` itself: the same checks, the
#      SDK's output-schema validation of every structured result, a call
#      cancelled with an AbortSignal, the session ended with DELETE, and no
#      protocol error reported by the SDK (a progress notification read with
#      its response is one); and scripts/interop/ts_oauth.mjs: its OAuth
#      client (the one Node clients build on) against the catalog as an OAuth
#      resource server, as python_oauth.py below,
#   6. runs scripts/interop/inspector_cli.py (the MCP Inspector 2.12.0 in CLI
#      mode: tools/list and tools/call, nothing printed on stderr) against it,
#      and starting `catalog --stdio` itself, without --protocol-era and with
#      legacy and modern,
#   7. runs the official conformance suite (@modelcontextprotocol/conformance)
#      against the conformance server's /mcp: 0.1.16 (handshake era), judged
#      against scripts/interop/conformance-expected-failures.yml, and
#      0.2.0-alpha.12 --requirements 2026-07-28, judged against
#      scripts/interop/conformance-expected-failures-2026-07-28.yml (a
#      missing file: every scenario must pass; neither has one left, scored
#      or not).
#
# Usage (from the repository root): scripts/interop.sh [--release]
# Environment:
#   INTEROP_RELEASE=1   same as --release
#   INTEROP_KEEP=1      keep the work directory (server logs, suite results)
#   INTEROP_BIN_DIR     use the catalog and conformance-server binaries there
#                       instead of building them
#   MCP_CONFORMANCE     command running the suite, given --version V (default:
#                       ../shared/tools/mcp-conformance when it exists, else
#                       npx --yes @modelcontextprotocol/conformance@V)
#   XDG_CACHE_HOME      the Python venv and the Inspector live in ${XDG_CACHE_HOME:-~/.cache}/mcp-interop
# Needs: cargo, python3 (with venv), node + npm (npx).
set -euo pipefail

CONFORMANCE_VERSION=0.1.16
CONFORMANCE_STATELESS_VERSION=0.2.0-alpha.12
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
here=$root/scripts/interop

profile=debug
cargo_profile=()
if [[ ${1:-} == --release || ${INTEROP_RELEASE:-} == 1 ]]; then
  profile=release
  cargo_profile=(--release)
fi

log() { printf '\n==> %s\n' "$*"; }
die() {
  printf 'interop: %s\n' "$*" >&2
  exit 1
}

for tool in cargo python3 node npm timeout; do
  command -v "$tool" >/dev/null || die "\`$tool\` is not installed"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-interop.XXXXXX")
pids=()
status=1
# stop_pids PID...: stops them (TERM to all, then KILL after 5 s each) and drops them from $pids.
stop_pids() {
  local pid i kept=()
  for pid in "$@"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "$@"; do
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    [[ " $* " == *" $pid "* ]] || kept+=("$pid")
  done
  pids=("${kept[@]}")
}
cleanup() {
  # Graceful shutdown gets 5 s, then SIGKILL.
  (( ${#pids[@]} )) && stop_pids "${pids[@]}"
  if [[ $status == 0 && ${INTEROP_KEEP:-} != 1 ]]; then
    rm -rf "$work"
  else
    printf 'interop: logs and results kept in %s\n' "$work" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- build
if [[ -n ${INTEROP_BIN_DIR:-} ]]; then
  # Binaries built already (CI: the ones `cargo test --workspace` built for
  # the examples' own tests; building them again with `cargo build -p` would
  # unify features differently and recompile half the dependencies).
  bin=$(cd "$INTEROP_BIN_DIR" && pwd)
  for exe in catalog conformance-server; do
    [[ -x $bin/$exe ]] || die "INTEROP_BIN_DIR=$INTEROP_BIN_DIR has no $exe"
  done
  log "using the catalog and conformance-server in $bin"
else
  log "building catalog and conformance-server ($profile)"
  cargo build "${cargo_profile[@]}" -p catalog -p conformance-server
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  bin=$target_dir/$profile
fi

# ---------------------------------------------------------------- python venv
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mcp-interop
venv=$cache/venv
stamp=$venv/.requirements.sha256
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  log "installing the Python SDK into $venv"
  mkdir -p "$cache"
  python3 -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  printf '%s\n' "$want" >"$stamp"
fi

# ---------------------------------------------------------------- MCP Inspector
INSPECTOR_VERSION=2.12.0
inspector_dir=$cache/inspector
inspector=$inspector_dir/node_modules/.bin/mcp-inspector
if [[ ! -x $inspector || $(cat "$inspector_dir/.version" 2>/dev/null) != "$INSPECTOR_VERSION" ]]; then
  log "installing the MCP Inspector $INSPECTOR_VERSION into $inspector_dir"
  rm -rf "$inspector_dir"
  mkdir -p "$inspector_dir"
  # 2.12 declares Node 22 but runs on Node 20; npm only warns about the engine.
  (cd "$inspector_dir" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/inspector@$INSPECTOR_VERSION") ||
    die "npm install of the MCP Inspector failed"
  printf '%s\n' "$INSPECTOR_VERSION" >"$inspector_dir/.version"
fi

# ---------------------------------------------------------------- TypeScript SDK
TS_SDK_VERSION=1.32.2
ts_sdk_dir=$cache/ts-sdk
ts_sdk=$ts_sdk_dir/node_modules/@modelcontextprotocol/sdk
if [[ ! -f $ts_sdk/package.json || $(cat "$ts_sdk_dir/.version" 2>/dev/null) != "$TS_SDK_VERSION" ]]; then
  log "installing the MCP TypeScript SDK $TS_SDK_VERSION into $ts_sdk_dir"
  rm -rf "$ts_sdk_dir"
  mkdir -p "$ts_sdk_dir"
  (cd "$ts_sdk_dir" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$TS_SDK_VERSION") ||
    die "npm install of the MCP TypeScript SDK failed"
  printf '%s\n' "$TS_SDK_VERSION" >"$ts_sdk_dir/.version"
fi

# ---------------------------------------------------------------- servers
# start NAME BINARY: runs it on a free loopback port; sets $url to its base URL.
start() {
  local name=$1 exe=$2 out=$work/$1.out err=$work/$1.err i
  shift 2
  # The files exist before the server starts: the shell opens them in the
  # background child, which may run after the first look below.
  : >"$out"
  : >"$err"
  "$exe" --listen 127.0.0.1:0 "$@" >"$out" 2>"$err" &
  pids+=($!)
  local pid=$!
  url=
  for ((i = 0; i < 300; i++)); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out" | head -n1)
    [[ -n $url ]] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$err" >&2
      die "$name exited before listening"
    fi
    sleep 0.1
  done
  [[ -n $url ]] || {
    cat "$err" >&2
    die "$name did not print \`listening on\` within 30 s"
  }
  printf '%s listening on %s (pid %s)\n' "$name" "$url" "$pid"
}

log "starting servers"
start catalog "$bin/catalog"
catalog_url=$url
start conformance-server "$bin/conformance-server"
conformance_url=$url
# The catalog protected by a token (from the environment, as a deployment passes it).
INTEROP_TOKEN=interop-$RANDOM$RANDOM
RPC_TOKENS=$INTEROP_TOKEN start catalog-protected "$bin/catalog"
protected_url=$url

# ---------------------------------------------------------------- python SDK
python_status=0
for mode in legacy auto 2026-07-28; do
  log "official Python SDK (mcp 2.3.0, mode=$mode) against the catalog"
  timeout 180 "$venv/bin/python" "$here/python_client.py" --url "$catalog_url/mcp/v1" --mode "$mode" ||
    python_status=$?
done

log "official Python SDK (mcp 2.3.0, modes legacy, auto, 2026-07-28) starting the catalog with --stdio"
timeout 300 "$venv/bin/python" "$here/python_stdio.py" --catalog "$bin/catalog" || python_status=$?

# ---------------------------------------------------------------- TypeScript SDK
ts_status=0
log "official TypeScript SDK ($TS_SDK_VERSION) against the catalog"
timeout 180 node "$here/ts_client.mjs" --sdk "$ts_sdk" --url "$catalog_url/mcp/v1" || ts_status=$?
log "official TypeScript SDK ($TS_SDK_VERSION) starting the catalog with --stdio"
timeout 180 node "$here/ts_client.mjs" --sdk "$ts_sdk" --stdio "$bin/catalog" || ts_status=$?

# ---------------------------------------------------------------- MCP Inspector CLI
inspector_status=0
for mode in legacy 2026-07-28; do
  log "official Python SDK (mode=$mode) against the catalog with Accept-Language: uk (Ukrainian tool texts)"
  timeout 180 "$venv/bin/python" "$here/python_client.py" --url "$catalog_url/mcp/v1" --mode "$mode" \
    --accept-language uk || python_status=$?
done

for mode in legacy 2026-07-28; do
  log "official Python SDK (mode=$mode) against the token-protected catalog: with the token, without, with a wrong one"
  timeout 180 "$venv/bin/python" "$here/python_client.py" --url "$protected_url/mcp/v1" --mode "$mode" \
    --token "$INTEROP_TOKEN" || python_status=$?
  timeout 60 "$venv/bin/python" "$here/python_client.py" --url "$protected_url/mcp/v1" --mode "$mode" \
    --expect-refusal || python_status=$?
  timeout 60 "$venv/bin/python" "$here/python_client.py" --url "$protected_url/mcp/v1" --mode "$mode" \
    --token "wrong-$INTEROP_TOKEN" --expect-refusal || python_status=$?
done

# ---------------------------------------------------------------- python SDK, OAuth
# The catalog as an OAuth resource server of scripts/interop/oauth_as.py (a test
# authorization server); the SDK's own OAuth client authorizes itself against it.
oauth_status=0
log "official Python SDK OAuth client (authorization code + PKCE, modes legacy, auto, 2026-07-28) against the catalog as an OAuth resource server"
# free_port: a free loopback port (the audience names the catalog's port, so it is
# chosen before the catalog starts; the catalog is retried on another if it is taken).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# await_listening NAME PID: waits (10 s) for NAME's `listening on URL` line in
# $work/NAME.out; sets $url, or leaves it empty when NAME exited or is silent.
await_listening() {
  local name=$1 pid=$2 i
  url=
  for ((i = 0; i < 100; i++)); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/$name.out" | head -n1)
    [[ -n $url ]] && return 0
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}
oauth_pids=()
oauth_url=
for attempt in 1 2 3; do
  oauth_port=$(free_port)
  audience=http://127.0.0.1:$oauth_port
  : >"$work/oauth-as.out"
  : >"$work/oauth-as.err"
  "$venv/bin/python" "$here/oauth_as.py" --resource "$audience" >"$work/oauth-as.out" 2>"$work/oauth-as.err" &
  pids+=($!)
  oauth_pids=($!)
  await_listening oauth-as $!
  issuer=$url
  if [[ -z $issuer ]]; then
    cat "$work/oauth-as.err" >&2
    echo "interop: the test authorization server did not start" >&2
    oauth_status=1
    break
  fi
  : >"$work/catalog-oauth.out"
  : >"$work/catalog-oauth.err"
  "$bin/catalog" --listen "127.0.0.1:$oauth_port" --oauth-issuer "$issuer" --oauth-audience "$audience" \
    --oauth-scope catalog:read >"$work/catalog-oauth.out" 2>"$work/catalog-oauth.err" &
  pids+=($!)
  oauth_pids+=($!)
  await_listening catalog-oauth $!
  oauth_url=$url
  [[ -n $oauth_url ]] && break
  # Most likely the port was taken meanwhile: both start again on new ports.
  tail -n 5 "$work/catalog-oauth.err" >&2
  stop_pids "${oauth_pids[@]}"
  oauth_pids=()
done
if [[ -n $oauth_url ]]; then
  printf 'test authorization server %s, catalog-oauth listening on %s (audience %s)\n' "$issuer" "$oauth_url" "$audience"
  timeout 60 "$venv/bin/python" "$here/python_oauth.py" --url "$oauth_url/mcp/v1" --issuer "$issuer" \
    --audience "$audience" || oauth_status=$?
  log "official TypeScript SDK OAuth client ($TS_SDK_VERSION) against the catalog as an OAuth resource server"
  timeout 60 node "$here/ts_oauth.mjs" --sdk "$ts_sdk" --url "$oauth_url/mcp/v1" --audience "$audience" ||
    oauth_status=$?
elif [[ $oauth_status == 0 ]]; then
  echo "interop: the catalog with --oauth-issuer did not start (stderr: $work/catalog-oauth.err)" >&2
  oauth_status=1
fi
(( ${#oauth_pids[@]} )) && stop_pids "${oauth_pids[@]}"

# `default`: no --protocol-era, as a user runs it.
for era in default legacy modern; do
  log "MCP Inspector $INSPECTOR_VERSION (CLI mode, --protocol-era $era) against the catalog"
  timeout 600 python3 "$here/inspector_cli.py" --inspector "$inspector" --url "$catalog_url/mcp/v1" --era "$era" ||
    inspector_status=$?
  log "MCP Inspector $INSPECTOR_VERSION (CLI mode, --protocol-era $era) against the token-protected catalog"
  timeout 600 python3 "$here/inspector_cli.py" --inspector "$inspector" --url "$protected_url/mcp/v1" --era "$era" \
    --header "Authorization: Bearer $INTEROP_TOKEN" || inspector_status=$?
  log "MCP Inspector $INSPECTOR_VERSION (CLI mode, --protocol-era $era) starting the catalog with --stdio"
  timeout 600 python3 "$here/inspector_cli.py" --inspector "$inspector" --stdio "$bin/catalog" --era "$era" ||
    inspector_status=$?
done

# ---------------------------------------------------------------- conformance suite
# run_suite VERSION BASELINE NAME [SUITE OPTIONS...]: runs the suite against the
# conformance server and judges it against BASELINE; sets $suite_verdict.
run_suite() {
  local version=$1 baseline=$2 name=$3
  shift 3
  local suite=()
  if [[ -n ${MCP_CONFORMANCE:-} ]]; then
    read -r -a suite <<<"$MCP_CONFORMANCE"
    suite+=(--version "$version")
  elif [[ -x $root/../shared/tools/mcp-conformance ]]; then
    suite=("$root/../shared/tools/mcp-conformance" --version "$version")
  else
    suite=(npx --yes "@modelcontextprotocol/conformance@$version")
    # The suite imports fs.globSync, which Node 20 lacks: give it a shim.
    if ! node -e 'process.exit(require("fs").globSync ? 0 : 1)'; then
      local shim
      shim=$(node -e 'console.log(require("url").pathToFileURL(process.argv[1]).href)' "$here/node20/register.mjs")
      export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import=$shim"
    fi
  fi
  log "official conformance suite $version ($name) against the conformance server"
  printf 'runner: %s\n' "${suite[*]}"
  local results=$work/conformance-$name
  mkdir -p "$results"
  # The suite's own exit code is 1 for unexpected failures and also for baseline
  # entries that now pass; conformance_baseline.py decides (the latter is a note).
  local status=0
  # No baseline file: every scenario must pass.
  local expected=()
  [[ -f $baseline ]] && expected=(--expected-failures "$baseline")
  timeout 900 "${suite[@]}" server --url "$conformance_url/mcp" "$@" \
    "${expected[@]}" -o "$results" >"$work/conformance-$name.log" 2>&1 || status=$?
  grep -E '^(=== SUMMARY|[✓✗] |Total:)' "$work/conformance-$name.log" || true
  local announced
  announced=$(sed -n 's/^Running [a-z0-9 -]* (\([0-9]*\) scenarios).*/\1/p' "$work/conformance-$name.log" | head -n1)
  if [[ -z $announced ]]; then
    tail -n 40 "$work/conformance-$name.log" >&2
    die "the conformance suite did not run (exit $status); log: $work/conformance-$name.log"
  fi
  suite_verdict=0
  python3 "$here/conformance_baseline.py" --results "$results" --baseline "$baseline" \
    --expected-count "$announced" || suite_verdict=$?
}

run_suite "$CONFORMANCE_VERSION" "$here/conformance-expected-failures.yml" handshake
baseline_status=$suite_verdict
run_suite "$CONFORMANCE_STATELESS_VERSION" "$here/conformance-expected-failures-2026-07-28.yml" stateless \
  --requirements 2026-07-28
stateless_status=$suite_verdict

# ---------------------------------------------------------------- verdict
log "summary"
failed=0
if [[ $python_status == 0 ]]; then
  echo "python SDK interop:  ok"
else
  echo "python SDK interop:  FAILED (exit $python_status)"
  failed=1
fi
if [[ $ts_status == 0 ]]; then
  echo "TypeScript SDK:      ok"
else
  echo "TypeScript SDK:      FAILED (exit $ts_status)"
  failed=1
fi
if [[ $oauth_status == 0 ]]; then
  echo "SDK OAuth clients:   ok (Python and TypeScript)"
else
  echo "SDK OAuth clients:   FAILED (exit $oauth_status; logs: $work/oauth-as.*, $work/catalog-oauth.*)"
  failed=1
fi
if [[ $inspector_status == 0 ]]; then
  echo "MCP Inspector CLI:   ok"
else
  echo "MCP Inspector CLI:   FAILED (exit $inspector_status)"
  failed=1
fi
if [[ $baseline_status == 0 ]]; then
  echo "conformance $CONFORMANCE_VERSION (handshake era): ok (only baseline failures)"
else
  echo "conformance $CONFORMANCE_VERSION (handshake era): FAILED (log: $work/conformance-handshake.log)"
  failed=1
fi
if [[ $stateless_status == 0 ]]; then
  echo "conformance $CONFORMANCE_STATELESS_VERSION (2026-07-28): ok (only baseline failures)"
else
  echo "conformance $CONFORMANCE_STATELESS_VERSION (2026-07-28): FAILED (log: $work/conformance-stateless.log)"
  failed=1
fi
if [[ $failed != 0 ]]; then
  for name in catalog catalog-protected catalog-oauth oauth-as conformance-server; do
    echo "--- last lines of $name stderr" >&2
    tail -n 20 "$work/$name.err" >&2 || true
  done
  exit 1
fi
status=0
