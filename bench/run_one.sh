#!/usr/bin/env bash
# bench/run_one.sh NAME URL -- SERVER COMMAND...
#
# Benchmarks one server: starts it pinned to CPU 1 (taskset), checks one
# request with curl, then drives it with wrk (one thread, pinned to CPU 0) at
# each concurrency in $CONCURRENCY, $REPEATS times: $WARMUP s warm-up (not
# recorded) + $DURATION s measured. Appends one JSON line per measured run to
# $OUT (rps, p50/p90/p99 in µs, errors, server CPU seconds, server peak RSS).
#
# Environment:
#   OUT          JSON-lines file to append to (required)
#   LOGDIR       where the server's stdout/stderr goes (default: dirname $OUT)
#   ROUND        round number recorded in each line (default 1)
#   REPEATS      measured runs per concurrency (default 2)
#   CONCURRENCY  space-separated list (default "1 32")
#   WARMUP, DURATION  seconds (default 3 and 10)
#   BODY         JSON-RPC body to send (see call.lua)
#   HEADERS      extra headers for curl and wrk ("Name: value|Name: value")
#   MCP_INIT=1   do the MCP handshake first (initialize, protocol 2025-11-25,
#                then notifications/initialized) and send the minted
#                Mcp-Session-Id with every request
#   EXPECT       a string the sample response must contain (default "result")
#   QUIET_BUSY   before each run, wait until the machine is idle: at most this
#                many CPU-seconds per second busy across all CPUs (default 0.10)
#   QUIET_TIMEOUT  give up waiting after this many seconds and run anyway (600)
#   MAX_OTHER_S  a measured run during which other processes (not the server,
#                not wrk) used more CPU-seconds than this is rejected
#                (logged to rejected.jsonl next to $OUT) and redone (default 0.5)
#   RETRIES      how many times a rejected run is redone (default 3)
# Each line also carries other_cpu_s (CPU used by everything else on the
# machine during the measured window) and steal_s (hypervisor steal time).
# Needs wrk, taskset and curl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
NAME=$1; URL=$2; shift 2; [ "${1:-}" = "--" ] && shift
: "${OUT:?set OUT to the results file}"
LOGDIR=${LOGDIR:-$(dirname "$OUT")}
ROUND=${ROUND:-1}; REPEATS=${REPEATS:-2}; CONCURRENCY=${CONCURRENCY:-1 32}
WARMUP=${WARMUP:-3}; DURATION=${DURATION:-10}; EXPECT=${EXPECT:-result}
PROTO=2025-11-25
mkdir -p "$LOGDIR"

# The script's own knobs stay out of the server's environment (the
# catalog reads `MCP_*` variables as settings).
env -u MCP_INIT taskset -c 1 "$@" >> "$LOGDIR/$NAME.server.log" 2>&1 &
SPID=$!
cleanup() { kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; }
trap cleanup EXIT

hostport=${URL#http://}; hostport=${hostport%%/*}
up=0
for _ in $(seq 1 150); do
  if (exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}") 2>/dev/null; then up=1; break; fi
  kill -0 "$SPID" 2>/dev/null || break
  sleep 0.2
done
[ "$up" = 1 ] || { echo "run_one: $NAME did not come up on $hostport (see $LOGDIR/$NAME.server.log)" >&2; exit 1; }
sleep 1

hdrs=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
if [ -n "${HEADERS:-}" ]; then IFS='|' read -ra hs <<< "$HEADERS"; for x in "${hs[@]}"; do hdrs+=(-H "$x"); done; fi

export MCP_SESSION_ID=${MCP_SESSION_ID:-}
if [ "${MCP_INIT:-0}" = 1 ]; then
  init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"'$PROTO'","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
  MCP_SESSION_ID=$(curl -sS -D - -o /dev/null -X POST "$URL" "${hdrs[@]}" --data-binary "$init" \
    | awk -F': *' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r\n')
  [ -n "$MCP_SESSION_ID" ] || { echo "run_one: $NAME: initialize returned no Mcp-Session-Id" >&2; exit 1; }
  curl -sS -o /dev/null -X POST "$URL" "${hdrs[@]}" -H "MCP-Protocol-Version: $PROTO" \
    -H "Mcp-Session-Id: $MCP_SESSION_ID" --data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}'
fi
[ -n "$MCP_SESSION_ID" ] && hdrs+=(-H "Mcp-Session-Id: $MCP_SESSION_ID")
# HEADERS may set the version itself (a 2026-07-28 client); send it once.
case "${HEADERS:-}" in *[Mm][Cc][Pp]-[Pp]rotocol-[Vv]ersion:*) ;; *) hdrs+=(-H "MCP-Protocol-Version: $PROTO") ;; esac

export BODY=${BODY:-'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}'}
export HEADERS=${HEADERS:-}
sample=$(curl -sS -X POST "$URL" "${hdrs[@]}" --data-binary "$BODY")
echo "$NAME sample: $sample" >&2
case $sample in *"$EXPECT"*) ;; *) echo "run_one: $NAME: sample response lacks '$EXPECT'" >&2; exit 1;; esac

TCK=$(getconf CLK_TCK)
QUIET_BUSY=${QUIET_BUSY:-0.10}; QUIET_TIMEOUT=${QUIET_TIMEOUT:-600}
MAX_OTHER_S=${MAX_OTHER_S:-0.5}; RETRIES=${RETRIES:-3}
REJECTED=$(dirname "$OUT")/rejected.jsonl
cpu_ticks() { awk '{print $14+$15}' "/proc/$SPID/stat"; }
rss_kib() { awk '/^VmHWM/{print $2}' "/proc/$SPID/status"; }
# "busy steal" jiffies summed over all CPUs (busy excludes idle and iowait).
sys_ticks() { awk '$1=="cpu"{print $2+$3+$4+$7+$8+$9, $9; exit}' /proc/stat; }
# CPU time of this shell's waited-for children (wrk), in ticks. `times` must
# run in this shell (a subshell would report its own, empty, children).
TIMES=$(mktemp); trap 'cleanup; rm -f "$TIMES"' EXIT
child_ticks() { awk -v t="$TCK" 'NR==2{ for (i=1;i<=2;i++){ x=$i; sub(/s$/,"",x); split(x,a,"m"); s+=a[1]*60+a[2] } print int(s*t+0.5) }' "$TIMES"; }
wait_quiet() {
  local waited=0 a b
  while :; do
    a=$(sys_ticks); sleep 1; b=$(sys_ticks)
    if awk -v a="${a%% *}" -v b="${b%% *}" -v t="$TCK" -v q="$QUIET_BUSY" 'BEGIN{exit !((b-a)/t <= q)}'; then return 0; fi
    waited=$((waited + 1))
    if [ "$waited" = 1 ]; then echo "run_one: $NAME: machine busy, waiting for it to go quiet..." >&2; fi
    if [ "$waited" -ge "$QUIET_TIMEOUT" ]; then echo "run_one: $NAME: still busy after ${QUIET_TIMEOUT}s, running anyway" >&2; return 0; fi
    sleep 4; waited=$((waited + 4))
  done
}
for C in $CONCURRENCY; do
  for RUN in $(seq 1 "$REPEATS"); do
    for ATTEMPT in $(seq 1 $((RETRIES + 1))); do
      wait_quiet
      taskset -c 0 wrk -t1 -c"$C" -d"${WARMUP}s" -s "$here/call.lua" "$URL" > /dev/null 2>&1
      times > "$TIMES"; W0=$(child_ticks); S0=$(sys_ticks); T0=$(cpu_ticks)
      L=$(taskset -c 0 wrk -t1 -c"$C" -d"${DURATION}s" --timeout 5s -s "$here/call.lua" "$URL" 2>&1 | sed -n 's/^JSON //p')
      T1=$(cpu_ticks); S1=$(sys_ticks); times > "$TIMES"; W1=$(child_ticks)
      [ -n "$L" ] || { echo "run_one: $NAME: wrk printed no summary" >&2; exit 1; }
      read -r CPUS OTHER STEAL < <(awk -v t0="$T0" -v t1="$T1" -v s0="${S0%% *}" -v s1="${S1%% *}" \
        -v st0="${S0##* }" -v st1="${S1##* }" -v w0="$W0" -v w1="$W1" -v t="$TCK" \
        'BEGIN{ o=(s1-s0)-(t1-t0)-(w1-w0); if (o<0) o=0; printf "%.2f %.2f %.2f\n",(t1-t0)/t,o/t,(st1-st0)/t }')
      line="{\"server\":\"$NAME\",\"c\":$C,\"round\":$ROUND,\"run\":$RUN,\"attempt\":$ATTEMPT,\"server_cpu_s\":$CPUS,\"other_cpu_s\":$OTHER,\"steal_s\":$STEAL,\"peak_rss_kib\":$(rss_kib),${L#\{}"
      if awk -v o="$OTHER" -v m="$MAX_OTHER_S" 'BEGIN{exit !(o > m)}' && [ "$ATTEMPT" -le "$RETRIES" ]; then
        echo "$line" >> "$REJECTED"
        echo "run_one: $NAME c=$C: other processes used ${OTHER}s CPU during the run; redoing it" >&2
        continue
      fi
      echo "$line" >> "$OUT"
      echo "$line" >&2
      break
    done
  done
done
