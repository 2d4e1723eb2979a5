#!/usr/bin/env python3
"""A small OAuth 2.1 authorization server for the interop checks (never for real use).

    oauth_as.py --resource http://127.0.0.1:PORT [--port 0] [--host 127.0.0.1]

Prints `listening on http://127.0.0.1:PORT` (its issuer identifier, exactly) on its
first stdout line once it accepts connections, then one line per request it answers.
It is the authorization server of one resource (--resource, the RFC 8707 identifier the
catalog is given as --oauth-audience) and serves:
  * GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (issuer = the URL above)
  * POST /register   RFC 7591 dynamic client registration (public clients with
                     token_endpoint_auth_method "none", or client_secret_basic/_post)
  * GET  /authorize  auto-approves: 302 to the registered redirect_uri with code, state
                     and iss (RFC 9207); needs response_type=code, a PKCE S256 challenge,
                     and resource = --resource (RFC 8707)
  * POST /token      authorization_code (checks the PKCE verifier, redirect_uri, client,
                     resource) and refresh_token grants: RS256 JWT access tokens (kid, iss,
                     aud = resource, sub, client_id, scope, iat, nbf, exp = 5 min, jti)
  * GET  /jwks       the public key
  * POST /test/mint  TEST ONLY: signs the JSON object posted as claims over the defaults
                     (for tokens a real server would never issue: another audience,
                     expired, without a scope); a claim given as null is left out
Scopes: catalog:read and catalog:write; a request without `scope` gets catalog:read.
Needs PyJWT and cryptography (the MCP SDK's venv has both).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit, urlunsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

SCOPES = ("catalog:read", "catalog:write")
DEFAULT_SCOPE = "catalog:read"
TOKEN_TTL = 300
CODE_TTL = 60


class State:
    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer
        self.resource = resource
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "interop-" + secrets.token_hex(4)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        self.jwks = {"keys": [jwk]}
        self.lock = threading.Lock()
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh_tokens: dict[str, dict[str, Any]] = {}

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "jwks_uri": f"{self.issuer}/jwks",
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
        }

    def sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})

    def access_token(self, client_id: str, scope: str, resource: str) -> str:
        now = int(time.time())
        return self.sign({
            "iss": self.issuer, "aud": resource, "sub": "interop-user", "client_id": client_id,
            "scope": scope, "iat": now, "nbf": now, "exp": now + TOKEN_TTL, "jti": secrets.token_hex(8),
        })


class OAuthError(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status


def pkce_s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).decode("ascii").rstrip("=")


def granted_scope(requested: str | None) -> str:
    if requested is None or not requested.strip():
        return DEFAULT_SCOPE
    scopes = requested.split()
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise OAuthError("invalid_scope", f"unknown scope(s): {' '.join(unknown)}")
    return " ".join(dict.fromkeys(scopes))


class Handler(BaseHTTPRequestHandler):
    server_version = "interop-oauth-as/1"
    state: State  # set on the subclass in main()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        print(f"{self.command} {self.path.split('?')[0]} -> {args[1] if len(args) > 1 else '?'}", flush=True)

    # ------------------------------------------------------------ helpers
    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_error_json(self, error: OAuthError) -> None:
        self.send_json(error.status, {"error": error.error, "error_description": error.description})

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def form(self) -> dict[str, str]:
        if not (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            raise OAuthError("invalid_request", "the token request must be application/x-www-form-urlencoded")
        fields = parse_qs(self.body().decode(), keep_blank_values=True)
        repeated = [name for name, values in fields.items() if len(values) > 1]
        if repeated:
            raise OAuthError("invalid_request", f"parameters given twice: {', '.join(repeated)}")
        return {name: values[0] for name, values in fields.items()}

    # ------------------------------------------------------------ routes
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = urlsplit(self.path).path
        if path == "/.well-known/oauth-authorization-server":
            self.send_json(200, self.state.metadata())
        elif path == "/jwks":
            self.send_json(200, self.state.jwks)
        elif path == "/authorize":
            self.authorize()
        else:
            self.send_json(404, {"error": "not_found"})

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        try:
            if path == "/register":
                self.register()
            elif path == "/token":
                self.token()
            elif path == "/test/mint":
                self.mint()
            else:
                self.send_json(404, {"error": "not_found"})
        except OAuthError as error:
            self.send_error_json(error)

    def register(self) -> None:
        try:
            metadata = json.loads(self.body() or b"{}")
        except json.JSONDecodeError:
            raise OAuthError("invalid_client_metadata", "the body is not JSON") from None
        if not isinstance(metadata, dict):
            raise OAuthError("invalid_client_metadata", "the body is not a JSON object")
        redirect_uris = metadata.get("redirect_uris")
        if not isinstance(redirect_uris, list) or not redirect_uris or not all(isinstance(u, str) for u in redirect_uris):
            raise OAuthError("invalid_redirect_uri", "redirect_uris must be a non-empty list of URLs")
        method = metadata.get("token_endpoint_auth_method") or "client_secret_basic"  # RFC 7591 §2 default
        if method not in ("none", "client_secret_basic", "client_secret_post"):
            raise OAuthError("invalid_client_metadata", f"token_endpoint_auth_method {method!r} is not supported")
        grant_types = metadata.get("grant_types") or ["authorization_code"]
        unsupported = [g for g in grant_types if g not in ("authorization_code", "refresh_token")]
        if unsupported:
            raise OAuthError("invalid_client_metadata", f"grant_types not supported: {unsupported}")
        if metadata.get("scope") is not None:
            granted_scope(metadata["scope"])
        client = dict(metadata)
        client.update({
            "client_id": "client-" + secrets.token_hex(8),
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
            "grant_types": grant_types,
            "response_types": ["code"],
        })
        if method != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
            client["client_secret_expires_at"] = 0
        with self.state.lock:
            self.state.clients[client["client_id"]] = client
        self.send_json(201, client)

    def authorize(self) -> None:
        query = {name: values[0] for name, values in parse_qs(urlsplit(self.path).query).items()}
        client = self.state.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri")
        # Errors before the redirect URI is known to be the client's are shown here (RFC 6749 §4.1.2.1).
        if client is None:
            self.send_json(400, {"error": "invalid_request", "error_description": "unknown client_id"})
            return
        if redirect_uri is None and len(client["redirect_uris"]) == 1:
            redirect_uri = client["redirect_uris"][0]
        if redirect_uri not in client["redirect_uris"]:
            self.send_json(400, {"error": "invalid_request",
                                 "error_description": f"redirect_uri {redirect_uri!r} is not registered"})
            return

        def redirect(params: dict[str, str]) -> None:
            params = {**params, "iss": self.state.issuer}
            if "state" in query:
                params["state"] = query["state"]
            parts = urlsplit(redirect_uri)
            joined = "&".join(p for p in (parts.query, urlencode(params)) if p)
            self.send_response(302)
            self.send_header("Location", urlunsplit(parts._replace(query=joined)))
            self.send_header("Content-Length", "0")
            self.end_headers()

        try:
            if query.get("response_type") != "code":
                raise OAuthError("unsupported_response_type", "only response_type=code")
            challenge = query.get("code_challenge")
            if not challenge or query.get("code_challenge_method") != "S256":
                raise OAuthError("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256")
            resource = query.get("resource")
            if resource is None:
                raise OAuthError("invalid_target", "the resource parameter (RFC 8707) is required")
            if resource != self.state.resource:
                raise OAuthError("invalid_target", f"unknown resource {resource!r} (this server: {self.state.resource})")
            scope = granted_scope(query.get("scope"))
        except OAuthError as error:
            redirect({"error": error.error, "error_description": error.description})
            return
        code = secrets.token_urlsafe(24)
        with self.state.lock:
            self.state.codes[code] = {
                "client_id": client["client_id"], "redirect_uri": redirect_uri, "challenge": challenge,
                "scope": scope, "resource": resource, "expires": time.time() + CODE_TTL,
            }
        redirect({"code": code})

    def authenticate_client(self, form: dict[str, str]) -> dict[str, Any]:
        """The client of a token request, per its registered token_endpoint_auth_method."""
        basic = self.headers.get("Authorization")
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if basic and basic.lower().startswith("basic "):
            decoded = base64.b64decode(basic[6:]).decode()
            user, _, password = decoded.partition(":")
            client_id, secret, used = unquote(user), unquote(password), "client_secret_basic"
        else:
            used = "client_secret_post" if secret is not None else "none"
        client = self.state.clients.get(client_id or "")
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if client["token_endpoint_auth_method"] != used:
            raise OAuthError("invalid_client", f"the client authenticates with {client['token_endpoint_auth_method']}, "
                             f"not {used}", 401)
        if used != "none" and not secrets.compare_digest(secret or "", client["client_secret"]):
            raise OAuthError("invalid_client", "wrong client secret", 401)
        return client

    def token(self) -> None:
        form = self.form()
        client = self.authenticate_client(form)
        grant = form.get("grant_type")
        resource = form.get("resource")
        if resource is None:
            raise OAuthError("invalid_target", "the resource parameter (RFC 8707) is required")
        if resource != self.state.resource:
            raise OAuthError("invalid_target", f"unknown resource {resource!r} (this server: {self.state.resource})")
        if grant == "authorization_code":
            with self.state.lock:
                grant_info = self.state.codes.pop(form.get("code", ""), None)  # one use only
            if grant_info is None or grant_info["expires"] < time.time():
                raise OAuthError("invalid_grant", "unknown, used or expired code")
            if grant_info["client_id"] != client["client_id"]:
                raise OAuthError("invalid_grant", "the code was issued to another client")
            if form.get("redirect_uri") != grant_info["redirect_uri"]:
                raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
            verifier = form.get("code_verifier")
            if not verifier or not secrets.compare_digest(pkce_s256(verifier), grant_info["challenge"]):
                raise OAuthError("invalid_grant", "the PKCE code_verifier does not match the code_challenge")
            if resource != grant_info["resource"]:
                raise OAuthError("invalid_target", "resource differs from the authorization request's")
            scope = grant_info["scope"]
        elif grant == "refresh_token":
            with self.state.lock:
                refresh = self.state.refresh_tokens.pop(form.get("refresh_token", ""), None)  # rotated
            if refresh is None or refresh["client_id"] != client["client_id"]:
                raise OAuthError("invalid_grant", "unknown or used refresh token")
            scope = refresh["scope"]
            if form.get("scope"):
                narrower = granted_scope(form["scope"])
                if not set(narrower.split()) <= set(scope.split()):
                    raise OAuthError("invalid_scope", "a refresh cannot widen the scope")
                scope = narrower
        else:
            raise OAuthError("unsupported_grant_type", f"grant_type {grant!r} is not supported")
        body: dict[str, Any] = {
            "access_token": self.state.access_token(client["client_id"], scope, resource),
            "token_type": "Bearer",
            "expires_in": TOKEN_TTL,
            "scope": scope,
        }
        if "refresh_token" in client["grant_types"]:
            refresh_token = secrets.token_urlsafe(24)
            with self.state.lock:
                self.state.refresh_tokens[refresh_token] = {"client_id": client["client_id"], "scope": scope}
            body["refresh_token"] = refresh_token
        self.send_json(200, body, {"Pragma": "no-cache"})

    def mint(self) -> None:
        try:
            overrides = json.loads(self.body() or b"{}")
        except json.JSONDecodeError:
            raise OAuthError("invalid_request", "the body is not JSON") from None
        if not isinstance(overrides, dict):
            raise OAuthError("invalid_request", "the body is not a JSON object")
        now = int(time.time())
        claims = {"iss": self.state.issuer, "aud": self.state.resource, "sub": "interop-user",
                  "client_id": "interop-test", "scope": DEFAULT_SCOPE, "iat": now, "nbf": now,
                  "exp": now + TOKEN_TTL, "jti": secrets.token_hex(8)}
        for name, value in overrides.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        self.send_json(200, {"access_token": self.state.sign(claims), "claims": claims})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resource", required=True, help="the protected resource's identifier (RFC 8707)")
    parser.add_argument("--host", default="127.0.0.1", help="the loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the port (default 0: a free one)")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    issuer = f"http://{args.host}:{server.server_address[1]}"
    Handler.state = State(issuer, args.resource)
    print(f"listening on {issuer} (resource {args.resource})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
