#!/usr/bin/env bash
# The dependency budget of an application that depends on `mcp` alone,
# without default features (MCP over Streamable HTTP in an application that
# brings its own server): fails when
#   cargo tree -p mcp --no-default-features -e normal --prefix none | sort -u
# has more than BUDGET lines (default 110), and lists the crates.
#
#   scripts/dependency-budget.sh [--list]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
budget=${BUDGET:-110}
tree=$(cargo tree --locked -p mcp --no-default-features -e normal --prefix none)
lines=$(sort -u <<<"$tree" | wc -l)
crates=$(sed 's/ (\*)$//; s/ (proc-macro)//' <<<"$tree" | awk '{print $1" "$2}' | sort -u | wc -l)
[[ ${1:-} == --list ]] && sed 's/ (\*)$//' <<<"$tree" | sort -u
printf 'mcp without default features: %d lines of cargo tree (%d crates); budget %d\n' "$lines" "$crates" "$budget"
if ((lines > budget)); then
  echo "scripts/dependency-budget.sh: over budget; new crates since the budget was set:" >&2
  sed 's/ (\*)$//' <<<"$tree" | sort -u >&2
  exit 1
fi
