-- wrk script for bench/run_one.sh: POST one MCP request in a loop and print
-- one machine-readable summary line ("JSON {...}") when done.
--   BODY            the JSON-RPC body (default: tools/call Catalog.get {"id":7})
--   MCP_SESSION_ID  adds the handshake-era `Mcp-Session-Id` header
--   HEADERS         extra headers, "Name: value" pairs separated by "|"
wrk.method = "POST"
wrk.body = os.getenv("BODY")
  or '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Catalog.get","arguments":{"id":7}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"

local sid = os.getenv("MCP_SESSION_ID")
if sid and sid ~= "" then wrk.headers["Mcp-Session-Id"] = sid end

local extra = os.getenv("HEADERS")
if extra then
  for pair in string.gmatch(extra, "[^|]+") do
    local k, v = string.match(pair, "^%s*([^:]+):%s*(.-)%s*$")
    if k then wrk.headers[k] = v end
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'JSON {"requests":%d,"duration_us":%d,"rps":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,'
      .. '"mean_us":%.1f,"max_us":%d,"err_connect":%d,"err_read":%d,"err_write":%d,'
      .. '"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
