#!/usr/bin/env bash
# The docs pages in a real browser: builds the catalog, starts it on a free
# loopback port and, with headless Chromium (Debian's `chromium`):
#   1. screenshots GET /rpc, /rpc/v2 and /mcp/v1 as a browser asks for them
#      (Accept: text/html...), 1280x2000,
#   2. dumps each page's DOM after its script ran and checks that every
#      method (tool) the endpoint lists was rendered by the script (so the
#      script ran under the page's Content-Security-Policy),
#   3. opens each page with `#try=Catalog.get`, which makes the page send
#      that method's example through its try-it form, and checks that the
#      response (a result, HTTP 200) was written into the page,
#   4. checks that each JSON-RPC method's errors (its `$ref`s resolved into
#      components.errors: code, message) and tags (services) are on the page,
#      with the services' descriptions, and that `#tag=Pinger` filters the
#      list to that service,
#   5. opens a hostile page (scripts/docs_page/hostile.py: the catalog's
#      template, script and policy with 1,000 methods in 40 services, a method
#      with 10,000 errors, missing and cyclic references, a 2 MB description,
#      markup in every text) and runs scripts/docs_page/driver.js in it (the
#      filters, the tag buttons, "show more"), which must find nothing wrong,
#   6. fails on any console error (a CSP violation, an uncaught exception).
#
# Usage (from anywhere): scripts/docs_page.sh
# Environment:
#   DOCS_PAGE_OUT   where the screenshots go (default: a new temporary directory)
#   CHROMIUM        the browser (default: chromium)
#   CATALOG         a built catalog binary (default: cargo build -p catalog)
# Needs: cargo, python3, chromium (apt-get install chromium).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

log() { printf '\n==> %s\n' "$*"; }
die() {
  printf 'docs_page: %s\n' "$*" >&2
  exit 1
}
# The URL a background server `$3` prints into `$1` after `$2` (`listening
# on http://...`); dies with its stderr (`$4`) when it exits first, or after 30 s.
printed_url() {
  local out=$1 prefix=$2 pid=$3 err=$4 what=$5 found
  for ((i = 0; i < 300; i++)); do
    found=$(sed -n "s/^$prefix \\(http:[^ ]*\\).*/\\1/p" "$out" | head -n1)
    if [[ -n $found ]]; then
      echo "$found"
      return
    fi
    kill -0 "$pid" 2>/dev/null || {
      cat "$err" >&2
      die "$what exited before listening"
    }
    sleep 0.1
  done
  die "$what did not print \`$prefix\` within 30 s"
}

chromium=${CHROMIUM:-chromium}
for tool in cargo python3 "$chromium" timeout; do
  command -v "$tool" >/dev/null || die "\`$tool\` is not installed"
done

out=${DOCS_PAGE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/docs-page.XXXXXX")}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/docs-page-work.XXXXXX")
pid=
hostile_pid=
status=1
cleanup() {
  local i
  if [[ -n $hostile_pid ]]; then
    kill "$hostile_pid" 2>/dev/null || true
    wait "$hostile_pid" 2>/dev/null || true
  fi
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [[ $status == 0 ]]; then
    rm -rf "$work"
  else
    printf 'docs_page: logs kept in %s\n' "$work" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z ${CATALOG:-} ]]; then
  log "building the catalog"
  cargo build -p catalog
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  CATALOG=$target_dir/debug/catalog
fi
[[ -x $CATALOG ]] || die "no catalog binary at $CATALOG"

log "starting the catalog"
: >"$work/catalog.out" # exists before the background child opens it
"$CATALOG" --listen 127.0.0.1:0 >"$work/catalog.out" 2>"$work/catalog.err" &
pid=$!
url=$(printed_url "$work/catalog.out" "listening on" "$pid" "$work/catalog.err" "the catalog")
url=${url%/}
echo "catalog at $url (pid $pid)"

# browser NAME ARGS...: runs headless Chromium with a fresh profile; its
# console goes to $work/NAME.log.
browser() {
  local name=$1
  shift
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --hide-scrollbars --user-data-dir="$work/profile-$name" --enable-logging=stderr --v=0 \
    "$@" 2>"$work/$name.log"
}

# console_clean NAME: no CSP violation, no uncaught error in the console.
console_clean() {
  if grep -E 'Content Security Policy|Uncaught|CONSOLE.*(Error|error)' "$work/$1.log" >&2; then
    die "$1: the browser console reported errors (above; full log in $work/$1.log)"
  fi
}

# names PATH: the methods (tools) PATH lists, one per line.
names() {
  python3 - "$url" "$1" <<'PY'
import json, sys, urllib.request
base, path = sys.argv[1], sys.argv[2]
if path.startswith("/rpc"):
    doc = json.load(urllib.request.urlopen(base + path))
    names = [m["name"] for m in doc["methods"]]
else:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    names = [t["name"] for t in json.load(urllib.request.urlopen(request))["result"]["tools"]]
print("\n".join(names))
PY
}

# check_dom NAME FILE PATH [TRIED]: every method of PATH rendered by the
# script; with TRIED, that method's try-it response is in the page.
check_dom() {
  python3 - "$@" <<'PY'
import html, re, sys
name, dom_file, names_file = sys.argv[1], sys.argv[2], sys.argv[3]
tried = sys.argv[4] if len(sys.argv) > 4 else None
dom = open(dom_file, encoding="utf-8").read()
names = [n for n in open(names_file, encoding="utf-8").read().split("\n") if n]
problems = []
if not names:
    problems.append("the endpoint lists no methods")
m = re.search(r'<body[^>]*data-rendered="(\d+)"', dom)
if not m or int(m.group(1)) != len(names):
    problems.append(f"the script did not finish rendering (data-rendered: {m.group(1) if m else 'absent'}, expected {len(names)})")
for n in names:
    if f'<section class="entry" id="m-{n}">' not in dom:
        problems.append(f"{n} was not rendered")
if tried:
    m = re.search(r'<pre class="response" id="out-' + re.escape(tried) + r'" data-status="([^"]*)">(.*?)</pre>', dom, re.S)
    if not m:
        problems.append(f"no response of the try-it call of {tried} in the page")
    else:
        status, text = m.group(1), html.unescape(m.group(2))
        if status != "200" or '"result"' not in text or '"error"' in text or '"isError": true' in text:
            problems.append(f"the try-it call of {tried} failed: HTTP {status}: {text[:500]}")
        else:
            print(f"{name}: try-it {tried}: HTTP {status}, {len(text)} bytes of result")
if problems:
    print(f"{name}:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"{name}: {len(names)} entries rendered")
PY
}

# check_openrpc NAME FILE DOC: each method's errors (resolved) and tags on
# the page, the services with their descriptions.
check_openrpc() {
  python3 - "$@" <<'PY'
import html, json, re, sys
name, dom_file, doc_file = sys.argv[1], sys.argv[2], sys.argv[3]
dom = open(dom_file, encoding="utf-8").read()
doc = json.load(open(doc_file, encoding="utf-8"))
components = doc.get("components", {}).get("errors", {})
problems = []
def text(fragment):
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))
checked = 0
for method in doc["methods"]:
    start = dom.find(f'<section class="entry" id="m-{method["name"]}">')
    if start < 0:
        problems.append(f'{method["name"]} is not on the page')
        continue
    section = dom[start:dom.find("</section>", start)]
    expected = []
    for error in method.get("errors", []):
        ref = error.get("$ref", "")
        error = components.get(ref[len("#/components/errors/"):], {}) if ref else error
        expected.append((str(error["code"]), error["message"]))
    table = re.search(r'<table class="errors">(.*?)</table>', section, re.S)
    shown = []
    if table:
        for row in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)[1:]:
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            shown.append((text(cells[0]), text(cells[1])))
    if shown != expected:
        problems.append(f'{method["name"]}: errors shown {shown}, expected {expected}')
    tags = re.search(r'<p class="tags">(.*?)</p>', section, re.S)
    shown_tags = [text(t) for t in re.findall(r'<button class="tag"[^>]*>(.*?)</button>', tags.group(1))] if tags else []
    if shown_tags != [t["name"] for t in method.get("tags", [])]:
        problems.append(f'{method["name"]}: tags shown {shown_tags}')
    checked += 1
services = re.search(r'<table class="services">(.*?)</table>', dom, re.S)
described = text(services.group(1)) if services else ""
for method in doc["methods"]:
    for tag in method.get("tags", []):
        if tag.get("description") and tag["description"] not in described:
            problems.append(f'the description of the service {tag["name"]} is not shown')
if problems:
    print(f"{name}:\n  " + "\n  ".join(sorted(set(problems))), file=sys.stderr)
    sys.exit(1)
print(f"{name}: errors and tags of {checked} methods shown, services described")
PY
}

# check_filtered NAME FILE TAG: only the methods of TAG are shown.
check_filtered() {
  python3 - "$@" <<'PY'
import json, re, sys
name, dom_file, doc_file, tag = sys.argv[1:5]
dom = open(dom_file, encoding="utf-8").read()
doc = json.load(open(doc_file, encoding="utf-8"))
wanted = {m["name"] for m in doc["methods"] if tag in [t["name"] for t in m.get("tags", [])]}
shown = set(re.findall(r'<section class="entry" id="m-([^"]*)">', dom))
hidden = set(re.findall(r'<section class="entry" id="m-([^"]*)" hidden="">', dom))
if not wanted or shown != wanted or len(shown) + len(hidden) != len(doc["methods"]):
    print(f"{name}: #tag={tag} shows {sorted(shown)}, expected {sorted(wanted)} ({len(hidden)} hidden)", file=sys.stderr)
    sys.exit(1)
print(f"{name}: #tag={tag} shows {len(shown)} of {len(doc['methods'])} methods")
PY
}

shots=()
for page in rpc:/rpc rpc-v2:/rpc/v2 mcp:/mcp/v1; do
  name=${page%%:*}
  path=${page#*:}
  names "$path" >"$work/$name.names" || die "$name: could not list the methods of $path"

  log "$name: screenshot of $url$path"
  shot=$out/docs-$name.png
  browser "$name-shot" --screenshot="$shot" --window-size=1280,2000 "$url$path" >/dev/null
  [[ -s $shot ]] || die "$name: no screenshot was written"
  console_clean "$name-shot"
  shots+=("$shot")

  log "$name: the DOM after the script ran"
  browser "$name-dom" --dump-dom --virtual-time-budget=5000 "$url$path" >"$work/$name.html"
  console_clean "$name-dom"
  check_dom "$name" "$work/$name.html" "$work/$name.names"

  log "$name: the try-it form (#try=Catalog.get)"
  browser "$name-try" --dump-dom --virtual-time-budget=10000 "$url$path#try=Catalog.get" >"$work/$name-try.html"
  console_clean "$name-try"
  check_dom "$name-try" "$work/$name-try.html" "$work/$name.names" Catalog.get

  if [[ $path == /rpc* ]]; then
    log "$name: errors and services"
    python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' \
      "$url$path" >"$work/$name.doc.json"
    check_openrpc "$name" "$work/$name.html" "$work/$name.doc.json"
    browser "$name-tag" --dump-dom --virtual-time-budget=5000 "$url$path#tag=Pinger" >"$work/$name-tag.html"
    console_clean "$name-tag"
    check_filtered "$name-tag" "$work/$name-tag.html" "$work/$name.doc.json" Pinger
  fi
done

log "hostile: 1,000 methods, 10,000 errors, broken references, a 2 MB description, markup in texts"
: >"$work/hostile.out"
python3 scripts/docs_page/hostile.py "$url" >"$work/hostile.out" 2>"$work/hostile.err" &
hostile_pid=$!
hostile=$(printed_url "$work/hostile.out" "serving on" "$hostile_pid" "$work/hostile.err" "hostile.py")
shot=$out/docs-hostile.png
started=$SECONDS
browser hostile-shot --screenshot="$shot" --window-size=1280,2000 --virtual-time-budget=10000 "$hostile?plain" >/dev/null
console_clean hostile-shot
shots+=("$shot")
browser hostile-dom --dump-dom --virtual-time-budget=10000 "$hostile" >"$work/hostile.html"
console_clean hostile-dom
kill "$hostile_pid" 2>/dev/null || true
wait "$hostile_pid" 2>/dev/null || true
python3 - "$work/hostile.html" $((SECONDS - started)) <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
body = re.search(r"<body([^>]*)>", dom)
attributes = dict(re.findall(r'([a-z-]+)="([^"]*)"', body.group(1) if body else ""))
if attributes.get("data-checked") != "done":
    sys.exit(f"hostile: the driver did not finish (body attributes {attributes})")
failures = json.loads(html.unescape(attributes.get("data-checks", "null")))
if failures != []:
    sys.exit("hostile: the driver found:\n  " + "\n  ".join(map(str, failures or ["no result"])))
print(f"hostile: {attributes.get('data-rendered')} entries rendered in {attributes.get('data-render-ms')} ms "
      f"after navigation, every driver check passed (driver {attributes.get('data-driver-ms')} ms, "
      f"both browser runs {sys.argv[2]} s)")
PY

status=0
log "docs pages OK; screenshots:"
printf '%s\n' "${shots[@]}"
