#!/usr/bin/env python3
"""Interop check: the official MCP Python SDK (mcp==2.3.0) authorizing itself with OAuth 2.1.

    python_oauth.py --url http://127.0.0.1:PORT/mcp/v1 --issuer http://127.0.0.1:AS_PORT
                    [--audience http://127.0.0.1:PORT] [--mode legacy|auto|2026-07-28 ...]

The catalog runs as an OAuth resource server (`--oauth-issuer ISSUER --oauth-audience
AUDIENCE --oauth-scope catalog:read`) of scripts/interop/oauth_as.py (ISSUER). First,
with plain HTTP (no SDK):
  * no token: 401 with `WWW-Authenticate: Bearer resource_metadata="…"`; that URL (and the
    path-inserted one of the MCP endpoint) serves RFC 9728 metadata naming the audience,
    the issuer and catalog:read;
  * a token of the issuer (its test-only /test/mint) is accepted on /mcp/v1 and /rpc;
  * the same token with a tampered signature, tokens for another audience, of another
    issuer, expired: 401 `error="invalid_token"`; a token without catalog:read: 403
    `error="insufficient_scope"` naming it.
Then, for each mode (default: legacy, auto, 2026-07-28), the SDK's own OAuth client
(OAuthClientProvider, in-memory token storage, a redirect handler that follows the
authorization URL itself and a callback handler handing back its code) connects: the
401 sends it through protected-resource metadata, authorization-server metadata,
dynamic client registration, the authorization-code grant with PKCE S256 and RFC 8707
`resource`, then:
  * the access token is the issuer's, for the audience (RFC 8707), with the scope asked;
  * tools/list (every page) has Catalog.get and not Catalog.rename, which needs
    catalog:write (`#[mcp_tool(scopes("catalog:write"))]`): the SDK asked for the scope the
    catalog's 401 names, catalog:read;
  * tools/call Catalog.get {"id": 7} succeeds; Catalog.rename gets a 403 whose challenge
    names catalog:read catalog:write, the SDK authorizes again for them (a step-up) and
    the call succeeds: two authorizations in all, the second asking for catalog:write;
  * once the token expires (the provider's clock is moved), a new session refreshes it
    (refresh_token grant, no new authorization) and calls Catalog.get again.
Prints one line per check; exits 1 at the first failure, with what was expected and seen.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import sys
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError

MODES = ("legacy", "auto", "2026-07-28")
# The client's redirect URI: nothing listens there, the redirect handler reads the code
# from the authorization server's Location header.
CALLBACK = "http://127.0.0.1:9/callback"
# The client's registered scope. The SDK asks for the scope named by the 401 challenge
# (else the metadata's scopes_supported) at authorization, and for more on a 403
# insufficient_scope (a step-up), as the MCP authorization spec says.
ASKED_SCOPE = "catalog:read catalog:write"
MAX_PAGES = 100


class Failure(Exception):
    pass


def check(ok: bool, what: str, detail: Any = None) -> None:
    if ok:
        print(f"  ok    {what}", flush=True)
        return
    print(f"  FAIL  {what}" + ("" if detail is None else f": {detail}"), flush=True)
    raise Failure(what if detail is None else f"{what}: {detail}")


def claims_of(token: str) -> dict[str, Any]:
    """The payload of a JWT, unverified (the catalog verifies; this only reads what was issued)."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def challenge_params(header: str) -> dict[str, str]:
    """The auth-params of a `Bearer k="v", k2=v2` challenge."""
    return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
            for m in re.finditer(r'([A-Za-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', header)}


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "interop-oauth", "version": "1"}}}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# ---------------------------------------------------------------- plain HTTP checks
def http_checks(url: str, issuer: str, audience: str) -> None:
    print(f"resource server checks (plain HTTP) against {url}", flush=True)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    with httpx2.Client(timeout=15) as http:
        def initialize(token: str | None) -> httpx2.Response:
            headers = dict(MCP_HEADERS)
            if token is not None:
                headers["Authorization"] = f"Bearer {token}"
            return http.post(url, json=INITIALIZE, headers=headers)

        def mint(**claims: Any) -> str:
            response = http.post(f"{issuer}/test/mint", json=claims)
            response.raise_for_status()
            return response.json()["access_token"]

        # No token: the challenge and the metadata it points to.
        response = initialize(None)
        challenge = response.headers.get("WWW-Authenticate", "")
        check(response.status_code == 401, "POST /mcp/v1 without a token: 401", f"HTTP {response.status_code}")
        params = challenge_params(challenge)
        metadata_url = params.get("resource_metadata")
        check(challenge.lower().startswith("bearer ") and metadata_url is not None,
              "the 401 has WWW-Authenticate: Bearer resource_metadata=\"…\"", challenge or "(no header)")
        path_inserted = f"{origin}/.well-known/oauth-protected-resource{urlsplit(url).path}"
        for where in dict.fromkeys([metadata_url, path_inserted]):
            response = http.get(where)
            try:
                document = response.json()
            except ValueError:
                document = response.text[:200]
            check(response.status_code == 200 and isinstance(document, dict)
                  and document.get("resource") == audience
                  and document.get("authorization_servers") == [issuer]
                  and "catalog:read" in (document.get("scopes_supported") or []),
                  f"GET {where}: resource {audience}, authorization_servers [{issuer}], scopes_supported has catalog:read",
                  f"HTTP {response.status_code}: {document}")

        # A good token is accepted, on MCP and on JSON-RPC.
        good = mint()
        response = initialize(good)
        check(response.status_code == 200, "a token minted by the issuer is accepted on /mcp/v1",
              f"HTTP {response.status_code}: {response.headers.get('WWW-Authenticate')} {response.text[:200]}")
        response = http.post(f"{origin}/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "Catalog.get", "params": {"id": 7}},
                             headers={"Authorization": f"Bearer {good}"})
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else response.text
        check(response.status_code == 200 and isinstance(body, dict) and (body.get("result") or {}).get("id") == 7,
              "the same token calls Catalog.get {id: 7} on /rpc", f"HTTP {response.status_code}: {body}")
        response = http.post(f"{origin}/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "Catalog.get", "params": {"id": 7}})
        check(response.status_code == 401, "/rpc without a token: 401", f"HTTP {response.status_code}")

        def refused(token: str, status: int, error: str, what: str) -> dict[str, str]:
            response = initialize(token)
            header = response.headers.get("WWW-Authenticate", "")
            got = challenge_params(header)
            check(response.status_code == status and header.lower().startswith("bearer ") and got.get("error") == error,
                  f"{what}: {status} error=\"{error}\"", f"HTTP {response.status_code}, WWW-Authenticate: {header!r}")
            return got

        header, payload, signature = good.split(".")
        tampered = signature[0].translate(str.maketrans("ABCDEFGHabcdefgh", "BCDEFGHAbcdefgha")) if signature[0] in \
            "ABCDEFGHabcdefgh" else ("A" if signature[0] != "A" else "B")
        refused(f"{header}.{payload}.{tampered}{signature[1:]}", 401, "invalid_token", "a token with a tampered signature")
        other = dict(claims_of(good))
        forged_payload = base64.urlsafe_b64encode(json.dumps({**other, "scope": "catalog:read catalog:write"})
                                                  .encode()).decode().rstrip("=")
        refused(f"{header}.{forged_payload}.{signature}", 401, "invalid_token",
                "a token whose claims were changed after signing")
        refused(mint(aud="http://127.0.0.1:1/not-this-resource"), 401, "invalid_token", "a token for another audience")
        refused(mint(aud=f"{audience}/other"), 401, "invalid_token", "a token for a sub-path of the audience")
        refused(mint(iss=f"{issuer}/other"), 401, "invalid_token", "a token of another issuer")
        now = int(time.time())
        refused(mint(iat=now - 7200, nbf=now - 7200, exp=now - 3600), 401, "invalid_token", "an expired token")
        refused(mint(exp=None), 401, "invalid_token", "a token without exp")
        got = refused(mint(scope="catalog:write"), 403, "insufficient_scope", "a token without catalog:read")
        check("catalog:read" in (got.get("scope") or "").split(), "the 403 names the missing scope catalog:read", got)


# ---------------------------------------------------------------- the SDK's OAuth client
class MemoryStorage:
    """TokenStorage in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Browser:
    """The user agent: opens the authorization URL (the test server approves at once) and
    reads the code, state and iss from the redirect to CALLBACK."""

    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        self.result: AuthorizationCodeResult | None = None

    async def redirect(self, authorization_url: str) -> None:
        self.requests.append({k: v[0] for k, v in parse_qs(urlsplit(authorization_url).query).items()})
        async with httpx2.AsyncClient(timeout=15, follow_redirects=False) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("Location", "")
        if response.status_code not in (302, 303) or not location.startswith(CALLBACK):
            raise Failure(f"GET {authorization_url}: expected a redirect to {CALLBACK}, got HTTP "
                          f"{response.status_code} Location {location!r}: {response.text[:300]}")
        params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        if "error" in params:
            raise Failure(f"the authorization server refused the authorization request: {params}")
        self.result = AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    async def callback(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise Failure("the callback came before the redirect")
        result, self.result = self.result, None
        return result


def leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


async def session(url: str, mode: str, provider: OAuthClientProvider, rename_to: str | None) -> None:
    http = create_mcp_http_client(auth=provider)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=30) as client:
        if rename_to is None:
            result = await client.call_tool("Catalog.get", {"id": 7})
            check(result.is_error is False and (result.structured_content or {}).get("result", {}).get("id") == 7,
                  "Catalog.get {id: 7} with the refreshed token", result.content)
            return
        check(client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28"),
              f"connected with the token, protocol {client.protocol_version}")
        names: list[str] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            names.extend(tool.name for tool in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        check("Catalog.get" in names, "tools/list has Catalog.get", names)
        check("Catalog.rename" not in names, "tools/list hides Catalog.rename (it needs catalog:write)", names)

        result = await client.call_tool("Catalog.get", {"id": 7})
        check(result.is_error is False and (result.structured_content or {}).get("result") == {"id": 7, "name": "n7"},
              "Catalog.get {id: 7} succeeds: {\"id\": 7, \"name\": \"n7\"}",
              f"isError={result.is_error}, structuredContent={result.structured_content}, content={result.content}")

        try:
            result = await client.call_tool("Catalog.rename", {"id": 12, "name": rename_to})
        except MCPError as error:
            granted = provider.context.current_tokens.scope if provider.context.current_tokens else None
            check(False, "Catalog.rename {id: 12} succeeds",
                  f"JSON-RPC error {error.code} {error.message!r} data={error.data} (the token grants {granted!r}; "
                  "the SDK asks for the scope of the 401 challenge, else the metadata's scopes_supported, and "
                  "asks for more only on HTTP 403 with WWW-Authenticate: Bearer error=\"insufficient_scope\", "
                  "scope=\"...\" - MCP 2025-11-25 authorization, scope challenge handling)")
        check(result.is_error is False and (result.structured_content or {}).get("result", {}).get("name") == rename_to,
              f"Catalog.rename {{id: 12, name: {rename_to!r}}} succeeds",
              f"isError={result.is_error}, structuredContent={result.structured_content}, content={result.content}")


async def sdk_flow(url: str, mode: str, issuer: str, audience: str) -> None:
    print(f"official Python SDK OAuth client (mode={mode}) against {url}", flush=True)
    storage = MemoryStorage()
    browser = Browser()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=f"mcp-interop ({mode})",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope=ASKED_SCOPE,
        ),
        storage=storage,
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    await session(url, mode, provider, rename_to=f"n12 renamed over OAuth ({mode})")

    for number, request in enumerate(browser.requests, 1):
        print(f"  (authorization request {number}: scope={request.get('scope')!r} "
              f"resource={request.get('resource')!r})", flush=True)
    # A second authorization is a step-up: a 403 insufficient_scope (Catalog.rename
    # needing catalog:write) makes the SDK ask again for more.
    stepped_up = len(browser.requests) == 2 and "catalog:write" in (browser.requests[1].get("scope") or "").split()
    check(stepped_up and "catalog:write" not in (browser.requests[0].get("scope") or "").split(),
          "two authorizations: catalog:read, then a step-up to catalog:write",
          f"{len(browser.requests)} authorizations: {[r.get('scope') for r in browser.requests]}")
    authorizations = len(browser.requests)
    asked = browser.requests[-1]
    check(asked.get("resource") == audience, f"the authorization request names resource={audience} (RFC 8707)", asked)
    check(asked.get("code_challenge_method") == "S256" and len(asked.get("code_challenge", "")) == 43,
          "the authorization request has a PKCE S256 challenge", asked)
    check(storage.client_info is not None and storage.client_info.client_id.startswith("client-"),
          "the SDK registered itself (RFC 7591)", storage.client_info)
    check(storage.tokens is not None, "the SDK stored the access token")
    claims = claims_of(storage.tokens.access_token)
    check(claims.get("iss") == issuer and claims.get("aud") == audience
          and claims.get("client_id") == storage.client_info.client_id,
          f"the access token is the issuer's, for {audience}, of the registered client", claims)
    check(set(claims.get("scope", "").split()) == set((asked.get("scope") or "catalog:read").split()),
          "the token grants the scope asked for", f"asked {asked.get('scope')!r}, granted {claims.get('scope')!r}")

    # Expiry: the provider thinks the token has expired (as it would 5 minutes later),
    # so the next request refreshes it instead of authorizing again.
    first = storage.tokens.access_token
    provider.context.token_expiry_time = time.time() - 1
    await session(url, mode, provider, rename_to=None)
    check(storage.tokens.access_token != first and len(browser.requests) == authorizations,
          "the expired token was refreshed (refresh_token grant), not authorized again",
          f"{len(browser.requests)} authorizations, token changed: {storage.tokens.access_token != first}")
    check(claims_of(storage.tokens.access_token).get("aud") == audience, "the refreshed token is for the same audience",
          claims_of(storage.tokens.access_token))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the catalog's MCP endpoint, e.g. http://127.0.0.1:8080/mcp/v1")
    parser.add_argument("--issuer", required=True, help="the authorization server (oauth_as.py), as the catalog names it")
    parser.add_argument("--audience", help="the catalog's --oauth-audience (default: the origin of --url)")
    parser.add_argument("--mode", action="append", choices=MODES, help="a mode to check (repeatable; default all)")
    args = parser.parse_args()
    audience = args.audience or "{0.scheme}://{0.netloc}".format(urlsplit(args.url))
    try:
        http_checks(args.url, args.issuer, audience)
        for mode in args.mode or MODES:
            asyncio.run(sdk_flow(args.url, mode, args.issuer, audience))
    except Failure as failure:
        print(f"python-sdk oauth interop: FAILED: {failure}", file=sys.stderr)
        return 1
    except BaseException as error:  # noqa: BLE001 - an SDK or transport failure, maybe inside a task group
        found = leaves(error)
        failures = [leaf for leaf in found if isinstance(leaf, Failure)]
        for leaf in failures or found:
            print(f"python-sdk oauth interop: FAILED: {type(leaf).__name__}: {leaf}", file=sys.stderr)
        return 1 if failures else 2
    print("python-sdk oauth interop: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
