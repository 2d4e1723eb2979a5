#!/usr/bin/env python3
"""Interop check: the official MCP Python SDK (mcp==2.3.0) against the catalog example.

    python_client.py --url http://127.0.0.1:PORT/mcp/v1 [--mode legacy|auto|2026-07-28] [--token T] [--expect-refusal]
                     [--accept-language uk]

Connects in the given mode (legacy: the initialize handshake; auto: server/discover,
which this server answers, so 2026-07-28; 2026-07-28: pinned, stateless), then checks:
  * every page of tools/list, and that the catalog's tools are there with descriptions;
  * tools/call Catalog.get {"id": 7}: structuredContent {"result": {"id": 7, "name": "n7"}}
    and the same value as JSON text in a text block;
  * tools/call Catalog.get {"id": 999}: a tool error (isError: true);
  * tools/call Catalog.stats with a progress callback and log level info: progress
    notifications arrive (increasing, up to the total) and a log message;
  * resources (a template and a read, an unknown URI), a prompt with arguments and
    completion of a prompt argument and of a template variable;
  * a resource subscription and its update, only for the resource subscribed to:
    resources/subscribe (legacy: on the session's GET stream, or a line over stdio),
    subscriptions/listen (2026-07-28);
  * a tool that asks the user (elicitation) before it cancels subscriptions;
  * the protocol-level ping (legacy only: 2026-07-28 removed it), and tools/call ping:
    "pong x" (JSON text, and structuredContent).
With --token, every request carries `Authorization: Bearer T` (a server started with
`--token T`); with --expect-refusal, the connection must fail with HTTP 401 or 403 and
no check runs (a protected server, no or a wrong token).
Exits 1 with a message for every mismatch, 2 when the connection itself fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent

# Tools the catalog's MCP group publishes at version 1.
EXPECTED_TOOLS = {"ping", "Catalog.search", "Catalog.get", "Catalog.list", "Catalog.categories", "Catalog.stats"}
MAX_PAGES = 100


class Checker:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.passed = 0

    def check(self, ok: bool, what: str, detail: Any = None) -> bool:
        if ok:
            self.passed += 1
            print(f"  ok    {what}")
        else:
            message = what if detail is None else f"{what}: {detail}"
            self.failures.append(message)
            print(f"  FAIL  {message}")
        return ok


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def json_texts(result: Any) -> list[Any]:
    """The text blocks parsed as JSON (a block that is not JSON stays a string)."""
    parsed = []
    for text in texts(result):
        try:
            parsed.append(json.loads(text))
        except json.JSONDecodeError:
            parsed.append(text)
    return parsed


# The catalog's Ukrainian text for Catalog.search in its `mcp` group
# (examples/catalog/translations/rpc/mcp.uk.yaml).
UKRAINIAN_SEARCH = "Пошук товарів за назвою. Повертає до limit товарів, найрелевантніші першими."


def server_for(url: str, token: str | None, language: str | None = None) -> Any:
    """The URL itself, or a transport whose HTTP client sends the token and Accept-Language."""
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if language is not None:
        headers["Accept-Language"] = language
    if not headers:
        return url
    return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))


async def run(url: str, mode: str, checker: Checker, token: str | None = None, language: str | None = None,
              server: Any = None) -> None:
    """The checks against `url`, or against `server` when given (e.g. StdioServerParameters)."""
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    questions: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult
        questions.append(params)
        return ElicitResult(action="accept", content={"confirm": True})

    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            updates.append(str(message.params.uri))

    if server is None:
        server = server_for(url, token, language)
    async with Client(server, mode=mode, read_timeout_seconds=30, log_level="info", logging_callback=on_log,
                      elicitation_callback=on_elicit, message_handler=on_message) as client:
        info = client.server_info
        print(f"connected ({mode}): protocol {client.protocol_version}, server {info.name if info else '?'} "
              f"{info.version if info else ''}")
        expected_version = "2025-11-25" if mode == "legacy" else "2026-07-28"
        checker.check(client.protocol_version == expected_version, f"protocol {expected_version}",
                      client.protocol_version)
        if mode != "2026-07-28":
            # A pinned client synthesizes its discovery result instead of asking.
            checker.check(client.server_capabilities.tools is not None, "server declares the tools capability")
        if mode == "legacy":
            # The handshake era sends log messages only after logging/setLevel.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated only as of 2026-07-28
                await client.set_logging_level("info")

        # tools/list, every page.
        tools = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await client.list_tools(cursor=cursor)
            pages += 1
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or pages >= MAX_PAGES:
                break
        names = [tool.name for tool in tools]
        print(f"  listed {len(tools)} tools on {pages} page(s): {', '.join(names)}")
        checker.check(cursor is None, f"tools/list ends within {MAX_PAGES} pages")
        checker.check(len(names) == len(set(names)), "tool names are unique", names)
        missing = EXPECTED_TOOLS - set(names)
        checker.check(not missing, "tools/list has the catalog's tools", f"missing {sorted(missing)}")
        undescribed = [tool.name for tool in tools if not tool.description]
        checker.check(not undescribed, "every tool has a description", f"without one: {undescribed}")
        if language == "uk":
            search = next((tool for tool in tools if tool.name == "Catalog.search"), None)
            checker.check(search is not None and search.description == UKRAINIAN_SEARCH,
                          "Accept-Language: uk gives the Ukrainian description of Catalog.search",
                          search.description if search else None)
        get_tool = next((tool for tool in tools if tool.name == "Catalog.get"), None)
        if get_tool is not None:
            checker.check(get_tool.output_schema is not None, "Catalog.get has an outputSchema")
            checker.check("id" in (get_tool.input_schema.get("properties") or {}),
                          "Catalog.get's inputSchema has `id`", get_tool.input_schema)

        # Catalog.get {"id": 7}: a structured result mirrored as JSON text.
        result = await client.call_tool("Catalog.get", {"id": 7})
        expected = {"id": 7, "name": "n7"}
        checker.check(result.is_error is False, "Catalog.get {id: 7} succeeds", result.content)
        checker.check(result.structured_content == {"result": expected},
                      "Catalog.get {id: 7} structuredContent == {\"result\": {\"id\": 7, \"name\": \"n7\"}}",
                      result.structured_content)
        checker.check(len(result.content) == 1 and json_texts(result) == [expected],
                      "Catalog.get {id: 7} text content is the product as JSON", texts(result))

        # Catalog.get {"id": 999}: the method fails, so the call is a tool error.
        result = await client.call_tool("Catalog.get", {"id": 999})
        checker.check(result.is_error is True, "Catalog.get {id: 999} has isError: true",
                      f"isError={result.is_error}, content={result.content}")
        checker.check(any("999" in text for text in texts(result)),
                      "Catalog.get {id: 999} error text names the product", texts(result))

        # Catalog.stats reports progress and logs a summary.
        progress: list[tuple[float, float | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total))

        result = await client.call_tool("Catalog.stats", {}, progress_callback=on_progress)
        checker.check(result.is_error is False and (result.structured_content or {}).get("result", {}).get("products") == 100,
                      "Catalog.stats counts 100 products", result.structured_content)
        values = [done for done, _ in progress]
        increasing = all(a < b for a, b in zip(values, values[1:]))
        if url != "stdio":
            checker.check(len(progress) == 4 and increasing and progress[-1] == (100.0, 100.0),
                          "Catalog.stats reports increasing progress up to 100 of 100", progress)
        else:
            # Over stdio a value is written 50 ms after it while the call goes on
            # (100 ms a batch); a later value may take its place on a busy machine.
            checker.check(len(progress) >= 1 and increasing and all(t == 100.0 and d <= 100.0 for d, t in progress),
                          "Catalog.stats reports increasing progress, of 100", progress)
        for _ in range(50):
            if logs:
                break
            await asyncio.sleep(0.02)
        checker.check(any(getattr(entry, "level", None) == "info" for entry in logs),
                      "Catalog.stats logs a summary at info", logs)

        # Protocol ping (legacy only) and the `ping` tool.
        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ping is deprecated only for 2026-07-28 connections
                pong = await client.send_ping()
            checker.check(pong is not None, "protocol ping answers")
        # The framework's text block is the result serialised as JSON, so a string
        # result arrives quoted: `"pong x"`.
        result = await client.call_tool("ping", {})
        checker.check(result.is_error is False and json_texts(result) == ["pong x"],
                      "tool ping returns \"pong x\" (as JSON text)", f"isError={result.is_error}, texts={texts(result)}")
        checker.check(result.structured_content == {"result": "pong x"},
                      "tool ping structuredContent == {\"result\": \"pong x\"}", result.structured_content)

        # The execution pipeline, as an agent meets it: validation rules, a
        # rename that refreshes the cached Catalog.get, `$rpc` refused.
        async def refused(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            try:
                outcome = await client.call_tool(name, arguments)
            except Exception as error:  # a protocol error (-32602) is a refusal too
                return True, str(error)
            return outcome.is_error is True, " ".join(texts(outcome))

        ok, why = await refused("Catalog.subscribe", {"id": 7, "email": "nope", "digest": "hourly"})
        checker.check(ok and "email" in why and "hourly" in why,
                      "Catalog.subscribe refuses a bad email and digest, naming both", why)
        result = await client.call_tool("Catalog.subscribe", {"id": 7, "email": "agent@example.com", "until": "2027-01-31"})
        checker.check(result.is_error is False and (result.structured_content or {}).get("result", {}).get("digest") == "weekly",
                      "Catalog.subscribe with valid arguments (digest defaults to weekly)", result.structured_content)
        result = await client.call_tool("Catalog.rename", {"id": 11, "name": "n11 renamed"})
        checker.check(result.is_error is False, "Catalog.rename succeeds", texts(result))
        fresh = None
        for _ in range(40):
            got = await client.call_tool("Catalog.get", {"id": 11})
            fresh = (got.structured_content or {}).get("result", {}).get("name")
            if fresh == "n11 renamed":
                break
            await asyncio.sleep(0.05)
        checker.check(fresh == "n11 renamed", "Catalog.get serves the renamed product (the cached entry was replaced)", fresh)
        ok, why = await refused("ping", {"$rpc": {"callback": "http://127.0.0.1:1/x"}})
        checker.check(ok and "$rpc" in why, "`$rpc` is an unknown argument over MCP", why)

        # Resources, prompts and completion, declared with annotations.
        templates = await client.list_resource_templates()
        checker.check(any(t.uri_template == "catalog://products/{id}" for t in templates.resource_templates),
                      "resources/templates/list has catalog://products/{id}",
                      [t.uri_template for t in templates.resource_templates])
        read = await client.read_resource("catalog://products/7")
        contents = read.contents[0] if read.contents else None
        checker.check(contents is not None and contents.mime_type == "application/json"
                      and json.loads(getattr(contents, "text", "null")) == {"id": 7, "name": "n7"},
                      "resources/read catalog://products/7 is the product as JSON", read.contents)
        try:
            await client.read_resource("catalog://nothing/here")
            checker.check(False, "resources/read of an unknown URI is an error")
        except Exception as error:  # noqa: BLE001 - the SDK raises the JSON-RPC error
            checker.check("not found" in str(error).lower(), "resources/read of an unknown URI: resource not found", error)
        # A subscribed resource that changes is announced: in the handshake era
        # (resources/subscribe) on the session's own stream (HTTP GET) or as a
        # line (stdio); in 2026-07-28 on a subscriptions/listen stream. Two
        # products are renamed, the one subscribed to second.
        watched, other = ("catalog://products/18", 19) if mode == "legacy" else ("catalog://products/20", 21)
        rename_id = int(watched.rsplit("/", 1)[1])
        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # removed only as of 2026-07-28
                await client.subscribe_resource(watched)
            await client.call_tool("Catalog.rename", {"id": other, "name": f"n{other} renamed"})
            await client.call_tool("Catalog.rename", {"id": rename_id, "name": f"n{rename_id} renamed"})
            for _ in range(100):
                if watched in updates:
                    break
                await asyncio.sleep(0.05)
            checker.check(updates == [watched], "resources/subscribe: an update for the subscribed resource only", updates)
        else:
            from mcp.shared.subscriptions import ResourceUpdated
            async with client.listen(resource_subscriptions=[watched]) as subscription:
                checker.check(list(subscription.honored.resource_subscriptions or []) == [watched],
                              "subscriptions/listen honors the resource subscription", subscription.honored)
                await client.call_tool("Catalog.rename", {"id": other, "name": f"n{other} renamed"})
                await client.call_tool("Catalog.rename", {"id": rename_id, "name": f"n{rename_id} renamed"})
                event = await asyncio.wait_for(subscription.__anext__(), 10)
                checker.check(isinstance(event, ResourceUpdated) and event.uri == watched,
                              "subscriptions/listen: an update for the subscribed resource only", event)

        prompts = await client.list_prompts()
        review = next((p for p in prompts.prompts if p.name == "Catalog.review"), None)
        checker.check(review is not None and [a.name for a in review.arguments or []] == ["name", "tone"],
                      "prompts/list has Catalog.review(name, tone)", prompts.prompts)
        prompt = await client.get_prompt("Catalog.review", {"name": "n7", "tone": "friendly"})
        kinds = [m.content.type for m in prompt.messages]
        checker.check(kinds == ["resource", "text"] and "friendly" in prompt.messages[1].content.text,
                      "prompts/get Catalog.review embeds the product and asks for a friendly review", prompt.messages)
        from mcp.types import PromptReference, ResourceTemplateReference
        names = await client.complete(PromptReference(type="ref/prompt", name="Catalog.review"),
                                      {"name": "name", "value": "n9"})
        checker.check(names.completion.values[:2] == ["n9", "n90"] and names.completion.total == 11,
                      "completion/complete of a product name", names.completion)
        ids = await client.complete(ResourceTemplateReference(type="ref/resource", uri="catalog://products/{id}"),
                                    {"name": "id", "value": "10"})
        checker.check(ids.completion.values == ["10", "100"], "completion/complete of a product id", ids.completion)

        # A destructive tool asks the user first (elicitation: a request on the
        # stream in the handshake era, an input-required round in 2026-07-28).
        email = f"elicit-{mode}@example.com"
        await client.call_tool("Catalog.subscribe", {"id": 3, "email": email})
        await client.call_tool("Catalog.subscribe", {"id": 4, "email": email})
        result = await client.call_tool("Catalog.unsubscribe_all", {"email": email})
        checker.check(len(questions) == 1 and "Cancel all 2" in getattr(questions[0], "message", ""),
                      "Catalog.unsubscribe_all asks the user to confirm", questions)
        checker.check(result.is_error is False and json_texts(result) == [f"cancelled 2 subscriptions of {email}"],
                      "Catalog.unsubscribe_all cancels after the confirmation", texts(result))


def leaves(error: BaseException) -> list[BaseException]:
    """The innermost exceptions of (possibly nested) exception groups, from anyio task groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def expect_refusal(url: str, mode: str, token: str | None) -> int:
    """A protected server: the HTTP status of an initialize without a valid token is 401 or 403,
    and the SDK cannot connect and call a tool (it reports such refusals as a generic error)."""
    import httpx2

    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "interop", "version": "1"}}}
    status = httpx2.post(url, json=body, headers=headers).status_code
    expected = 403 if token is not None else 401
    if status != expected:
        print(f"python-sdk interop: FAILED: initialize without a valid token got HTTP {status}, not {expected}",
              file=sys.stderr)
        return 1
    try:
        asyncio.run(run(url, mode, Checker(), token))
    except Exception as error:  # noqa: BLE001 - the refusal is the expected outcome
        found = " ".join(f"{type(leaf).__name__}: {leaf}" for leaf in leaves(error))
        print(f"python-sdk interop ({mode}): refused as expected (HTTP {status}; the SDK says {found[:120]})")
        return 0
    print("python-sdk interop: FAILED: the protected server served a client without a valid token", file=sys.stderr)
    return 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the catalog's MCP endpoint, e.g. http://127.0.0.1:8080/mcp/v1")
    parser.add_argument("--mode", default="legacy", help="legacy, auto or 2026-07-28 (default legacy)")
    parser.add_argument("--token", help="send `Authorization: Bearer TOKEN` on every request")
    parser.add_argument("--accept-language", help="send `Accept-Language` on every request (uk: check Ukrainian texts)")
    parser.add_argument("--expect-refusal", action="store_true",
                        help="the server must refuse the connection with HTTP 401 or 403")
    args = parser.parse_args()
    print(f"python-sdk interop ({args.mode}{', token' if args.token else ''}) against {args.url}")
    checker = Checker()
    if args.expect_refusal:
        return expect_refusal(args.url, args.mode, args.token)
    try:
        asyncio.run(run(args.url, args.mode, checker, args.token, args.accept_language))
    except Exception as error:  # noqa: BLE001 - report any SDK or transport failure and exit non-zero
        for leaf in leaves(error):
            print(f"python-sdk interop: FAILED: {type(leaf).__name__}: {leaf}", file=sys.stderr)
        if checker.failures:
            print(f"(and {len(checker.failures)} failed check(s) before it)", file=sys.stderr)
        return 2
    if checker.failures:
        print(f"python-sdk interop: FAILED: {len(checker.failures)} of {checker.passed + len(checker.failures)} "
              "checks failed:", file=sys.stderr)
        for failure in checker.failures:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(f"python-sdk interop ({args.mode}): all {checker.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
