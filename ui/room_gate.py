"""The workshop server's access gate: an ASGI middleware in front of Streamlit's whole server (:mod:`ui.room`).

Every request — a page, a static file, the health and host-config endpoints, uploads, media, the websocket — passes
only with the room's valid cookie or a link's token:

* an HTTP request carrying ``?token=`` with a valid token gets the role's cookie (``HttpOnly``, ``SameSite=Lax``) and
  a redirect (303) to the same address without the token, so the token leaves the address bar;
* a request with a valid cookie goes on to Streamlit;
* anything else gets 403 and one line of text (no page, no data); a websocket is closed before it is accepted (the
  server answers 403 to the handshake).

:func:`install` puts the gate around the app Streamlit builds (``create_starlette_app``), before the server starts,
and prints the links once the server is up.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ui.room import COOKIE, TOKEN_PARAM, Room, activate

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

REFUSED = (b"This Privacy Parameter Studio is a workshop server: open the join link the facilitator shows the room "
           b"(or ask for the new one if it changed).\n")


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def _cookie(scope: Scope) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(_header(scope, b"cookie"))
    except Exception:  # noqa: BLE001 - a malformed cookie header is no cookie
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


class RoomGate:
    """ASGI middleware letting in only the room (see the module docstring). ``on_started`` runs once the server
    reports its start-up complete (the links are printed then)."""

    def __init__(self, app: Callable[..., Awaitable[None]], room: Room,
                 on_started: Callable[[], None] | None = None) -> None:
        self.app = app
        self.room = room
        self.on_started = on_started

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self.app(scope, receive, self._watch_startup(send))
            return
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        tokens = [v for k, v in query if k == TOKEN_PARAM]
        role = self.room.role_for_token(tokens[-1]) if tokens else None
        if role is not None and kind == "http":
            rest = [(k, v) for k, v in query if k != TOKEN_PARAM]
            location = (scope.get("root_path", "") + scope.get("path", "/")) + (f"?{urlencode(rest)}" if rest else "")
            cookie = f"{COOKIE}={self.room.cookie_for(role)}; Path=/; HttpOnly; SameSite=Lax"
            await self._respond(send, 303, b"", [(b"location", location.encode("latin-1")),
                                                 (b"set-cookie", cookie.encode("latin-1"))])
            return
        if self.room.role_for_cookie(_cookie(scope)) is not None:
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await self._respond(send, 403, REFUSED, [(b"content-type", b"text/plain; charset=utf-8")])

    @staticmethod
    async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        headers = [*headers, (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _watch_startup(self, send: Send) -> Send:
        async def watched(message: Message) -> None:
            await send(message)
            if message.get("type") == "lifespan.startup.complete" and self.on_started is not None:
                self.on_started()

        return watched


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback (from its network interfaces; nothing is sent)."""
    import socket

    import psutil

    found = []
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family == socket.AF_INET and not address.address.startswith("127."):
                found.append(address.address)
    return sorted(set(found))


def announce(room: Room, host: str, port: int, out: Any = None) -> None:
    """Print the facilitator's link and the join link (one per LAN address when listening on all of them)."""
    out = out or sys.stdout
    local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    joins = (lan_addresses() or [local]) if host in ("0.0.0.0", "::", "") else [host]
    print("\n  Privacy Parameter Studio — workshop server", file=out)
    print(f"  Facilitator (keep it to yourself):  {room.link(local, port, 'facilitator')}", file=out)
    for address in joins:
        print(f"  Join link for the room:             {room.link(address, port)}", file=out)
    print("  Anyone without one of these links gets no page and no data. The facilitator can rotate the join link "
          "in the app's sidebar.\n", file=out, flush=True)


def install(room: Room) -> None:
    """Make ``room`` the server's room and put the gate in front of the app Streamlit builds (call before the server
    starts)."""
    from streamlit import config
    from streamlit.web.server.starlette import starlette_server

    activate(room)
    build = starlette_server.create_starlette_app

    def gated(runtime: Any) -> RoomGate:
        def started() -> None:
            announce(room, str(config.get_option("server.address") or "0.0.0.0"),
                     int(config.get_option("server.port")))

        return RoomGate(build(runtime), room, on_started=started)

    starlette_server.create_starlette_app = gated
