#!/usr/bin/env python3
"""The hostile docs page for scripts/docs_page.sh.

Takes the catalog's real page (GET BASE/rpc as a browser: its template,
style, script and Content-Security-Policy), puts hostile data into its data
block (1,000 methods in 40 services plus odd ones, a method with 10,000
errors among which missing, cyclic and prototype-named references, a 2 MB
description, markup in every text) and the test driver (driver.js, allowed
by one more script hash; the rest of the policy as the catalog sends it),
and serves it at /hostile on a free loopback port until killed (at
/hostile?plain without the driver, for a screenshot).

Usage: hostile.py BASE_URL   (prints "serving on URL" once ready)
"""

import base64
import hashlib
import http.server
import json
import os
import re
import sys
import urllib.request

HOSTILE = "</script><img src=x onerror=alert(1)><!-- <script>alert(2)</script> \u2028 & ' \" javascript:alert(3)"
SERVICES = 40
METHODS = 1000
ERRORS = 10_000


def script_safe(value):
    """JSON that can sit in a <script> element, as the server writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def entry(name, **fields):
    base = {"name": name, "deprecated": False, "params": [], "annotations": {}, "example": {}}
    base.update(fields)
    return base


def hostile_data():
    huge = (HOSTILE + " ") * 20_000  # about 2 MB
    errors = {f"E{i}": {"code": i, "message": f"error {i} {HOSTILE}"} for i in range(ERRORS)}
    errors["E0"]["description"] = huge
    errors["E1"]["dataSchema"] = {"type": "object", "description": HOSTILE}
    errors["E2"]["data"] = {HOSTILE: HOSTILE}
    errors["rpc.InvalidParams"] = {"code": -32602, "message": "Invalid params"}
    errors["__proto__"] = {"code": 31337, "message": "keyed __proto__"}
    big_errors = [{"shared": "rpc.InvalidParams"}] + [{"shared": f"E{i}"} for i in range(ERRORS)]
    big_errors += [
        {"shared": "__proto__"},
        {"shared": "constructor"},
        {"inline": {"code": 7, "message": HOSTILE, "description": HOSTILE, "data": HOSTILE}},
        {"unresolved": {"reference": "#/components/errors/Missing", "reason": "no such error in components.errors"}},
        {"unresolved": {"reference": "#/components/errors/A", "reason": "a reference cycle"}},
        {"unresolved": {"reference": HOSTILE, "reason": HOSTILE}},
        {"unresolved": {"reference": "x" * 100_000, "reason": "not a reference into #/components/errors/"}},
    ]
    entries = [entry("Big.errors", tags=["Big"], errors=big_errors, description="Answers with every error.")]
    for i in range(METHODS):
        service = f"S{i % SERVICES}"
        entries.append(entry(f"{service}.m{i}", title=f"Method {i}", tags=[service], errors=[{"shared": f"E{i}"}]))
    entries.append(entry("Huge.description", description=huge, tags=["Huge"]))
    entries.append(entry(f"Evil.{HOSTILE}", title=HOSTILE, description=HOSTILE, tags=[HOSTILE],
                         params=[{"name": HOSTILE, "description": HOSTILE, "required": True, "schema": {"default": HOSTILE}}],
                         annotations={HOSTILE: HOSTILE}, example={HOSTILE: HOSTILE}))
    entries.append(entry("Proto.method", tags=["__proto__"]))
    entries.append(entry("Ctor.method", tags=["constructor"]))
    entries.append(entry("Many.tags", tags=[f"T{i}" for i in range(100)]))
    entries.append(entry("Untagged.one"))
    entries.append(entry("Untagged.two", errors=[{"shared": "hasOwnProperty"}]))
    tags = [{"name": "Big", "description": "The method with every error."},
            {"name": "Huge", "description": huge}]
    tags += [{"name": f"S{i}", "description": f"Service {i}: {HOSTILE}"} for i in range(SERVICES)]
    tags += [{"name": HOSTILE, "description": HOSTILE}, {"name": "__proto__"}, {"name": "constructor"}]
    tags += [{"name": f"T{i}"} for i in range(100)]
    data = {
        "kind": "jsonrpc", "title": HOSTILE, "description": huge, "appVersion": HOSTILE, "language": "en",
        "version": 1, "versions": [{"name": HOSTILE, "href": "javascript:alert(4)", "current": True}],
        "endpoint": HOSTILE, "postPath": "/hostile", "protected": False,
        "links": [[HOSTILE, "//evil.example/x"], [HOSTILE, "javascript:alert(5)"]],
        "note": HOSTILE, "tryIt": True, "entries": entries,
        "schemas": {HOSTILE: {"description": HOSTILE}}, "tags": tags, "errors": errors,
    }
    per_service = [e for e in entries if e["name"].startswith("S3.")]
    expect = {
        "hostile": HOSTILE, "big": "Big.errors", "bigErrors": len(big_errors), "bigUnresolved": 5,
        "protoCode": 31337, "huge": "Huge.description", "hugeText": huge, "perService": len(per_service),
        "perServiceM3": len([e for e in per_service if "m3" in (e["name"] + "\n" + e.get("title", "")).lower()]),
        "untagged": 2, "manyTags": "Many.tags", "elsewhere": "S5.m5",
    }
    return data, expect


def main():
    base = sys.argv[1].rstrip("/")
    here = os.path.dirname(os.path.abspath(__file__))
    driver = open(os.path.join(here, "driver.js"), encoding="utf-8").read()
    request = urllib.request.Request(base + "/rpc", headers={"Accept": "text/html"})
    with urllib.request.urlopen(request) as response:
        template = response.read().decode("utf-8")
        policy = response.headers["Content-Security-Policy"]
    data, expect = hostile_data()
    block = re.compile(r'(<script type="application/json" id="docs-data">)(.*?)(</script>)', re.S)
    if not block.search(template):
        sys.exit("hostile.py: no data block in the catalog's page")
    page = block.sub(lambda m: m.group(1) + script_safe(data) + m.group(3), template, count=1)
    extra = ('<script type="application/json" id="docs-expect">' + script_safe(expect) + "</script>\n"
             "<script>" + driver + "</script>\n")
    plain = page.encode("utf-8")
    page = page.replace("</body>", extra + "</body>", 1)
    digest = base64.b64encode(hashlib.sha256(driver.encode("utf-8")).digest()).decode()
    if "script-src 'sha256-" not in policy:
        sys.exit(f"hostile.py: unexpected policy {policy}")
    policy = policy.replace("script-src ", f"script-src 'sha256-{digest}' ", 1)
    body = page.encode("utf-8")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("#")[0]
            if path not in ("/hostile", "/hostile?plain"):
                self.send_error(404)
                return
            content = plain if path.endswith("?plain") else body
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", policy)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"serving on http://127.0.0.1:{server.server_address[1]}/hostile ({len(body)} bytes)", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
