"""The workshop server lets in only the room (issue 36 §3): ``studio app --workshop``, on 127.0.0.1 here.

Raw HTTP requests and websocket handshakes without the room's token or cookie get 403 and no page and no data —
pages, static files, the health and host-config endpoints, uploads, media, the websocket. A join link sets the cookie
and redirects to the address without the token. The facilitator uploads a table and shares it; a participant opens
the Data page on it without uploading and receives its columns but none of its values (the raw rows are the
facilitator's only). Rotating the join link shuts out the old cookie — new requests and the session already open —
and the new link works. The sessions speak Streamlit's protocol (tests/e2e/streamlit_session.py), so every message a
session received is searched.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from tests.e2e.conftest import ARTIFACTS, ROOT, free_port, stop_process_group
from tests.e2e.streamlit_session import EventLoopThread, StreamlitSession
from ui.room import COOKIE
from ui.room_gate import REFUSED

pytestmark = pytest.mark.e2e
STEPS = True


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003 - urllib's signature
        return None


def _get(url: str, cookie: str | None = None, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one request, redirects not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, method=method, headers={"Cookie": cookie} if cookie else {})
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def workshop():
    """A workshop server on 127.0.0.1 (``studio app --workshop --host 127.0.0.1``): url, facilitator and join tokens."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"workshop-{port}.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen([sys.executable, "-m", "studio", "app", "--workshop", "--host", "127.0.0.1", "--port",
                             str(port)], cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while "Join link" not in log_path.read_text(errors="replace"):
            assert proc.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, "the workshop server printed no join link within 90 s"
            time.sleep(0.2)
        text = log_path.read_text(errors="replace")
        facilitator = re.search(r"Facilitator.*\?token=([\w-]+)", text).group(1)
        join = re.search(r"Join link.*http://127\.0\.0\.1:\d+/\?token=([\w-]+)", text).group(1)
        yield {"url": f"http://127.0.0.1:{port}", "facilitator": facilitator, "join": join}
    finally:
        stop_process_group(proc, timeout=15)
        log.close()


def _cookie_of(workshop, token: str) -> str:
    status, headers, _ = _get(f"{workshop['url']}/data?token={token}&page=x")
    assert status == 303, status
    assert headers["location"] == "/data?page=x"  # the token leaves the address; the rest stays
    morsel = headers["set-cookie"].split(";")[0]
    assert morsel.startswith(f"{COOKIE}=") and token not in morsel and "HttpOnly" in headers["set-cookie"]
    return morsel


@pytest.mark.parametrize("path,method", [
    ("/", "GET"), ("/data", "GET"), ("/_stcore/health", "GET"), ("/_stcore/host-config", "GET"),
    ("/static/js/main.js", "GET"), ("/favicon.png", "GET"), ("/media/x.png", "GET"),
    ("/_stcore/upload_file/session/file", "PUT"), ("/_stcore/stream", "GET"),
])
def test_requests_without_the_room_get_no_page_and_no_data(workshop, path, method):
    url = workshop["url"] + path
    for cookie in (None, f"{COOKIE}=p.{'0' * 64}", f"{COOKIE}={workshop['join']}"):  # none, forged, the raw token
        status, headers, body = _get(url, cookie, method)
        assert (status, body) == (403, REFUSED), (path, cookie, status, body[:200])
        assert "set-cookie" not in {k.lower() for k in headers}
    status, headers, body = _get(url + "?token=" + secrets.token_urlsafe(16), method=method)  # a wrong token
    assert (status, body) == (403, REFUSED)


def test_a_websocket_without_the_room_cookie_is_refused(workshop):
    async def connect(cookie):
        async with websockets.connect(workshop["url"].replace("http", "ws") + "/_stcore/stream",
                                      subprotocols=["streamlit"], origin=workshop["url"],
                                      additional_headers={"Cookie": cookie} if cookie else None):
            pass

    loop = EventLoopThread()
    try:
        for cookie in (None, f"{COOKIE}=f.{'1' * 64}"):
            with pytest.raises(InvalidStatus) as refused:
                loop.run(connect(cookie))
            assert refused.value.response.status_code == 403
        loop.run(connect(_cookie_of(workshop, workshop["join"])))  # positive control: with the cookie it opens
    finally:
        loop.close()


def test_a_join_link_lets_in_pages_static_files_and_health(workshop):
    cookie = _cookie_of(workshop, workshop["join"])
    status, _, body = _get(workshop["url"] + "/", cookie)
    assert status == 200 and b"<html" in body.lower()
    assert _get(workshop["url"] + "/_stcore/health", cookie)[0] == 200
    script = re.search(rb'src="(\./)?(static/js/[^"]+\.js)"', body).group(2).decode()
    assert _get(f"{workshop['url']}/{script}", cookie)[0] == 200


def _table(marker: str) -> bytes:
    rows = [f"col_{marker},age_{marker},outcome_{marker}"] + [f"{9_100_000 + i},{20 + i % 40},{(i * 7) % 5}"
                                                                for i in range(80)]
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture(scope="module")
def room(workshop):
    """The facilitator's session after uploading a table and sharing it; a participant's session on the Data page."""
    marker = secrets.token_hex(4)
    loop = EventLoopThread()
    facilitator = StreamlitSession(workshop["url"], "data", "data=upload:0",
                                   cookie=_cookie_of(workshop, workshop["facilitator"]))
    participant = StreamlitSession(workshop["url"], "data", cookie=_cookie_of(workshop, workshop["join"]))

    async def share():
        await facilitator.open()
        await facilitator.upload(f"room-{marker}.csv", _table(marker))
        await facilitator.click("room.share")
        await participant.open()

    try:
        loop.run(share())
        yield {"marker": marker, "loop": loop, "facilitator": facilitator, "participant": participant}
    finally:
        loop.run(facilitator.close())
        loop.run(participant.close())
        loop.close()


def test_a_participant_explores_the_shared_data_without_its_values(room):
    marker, facilitator, participant = room["marker"], room["facilitator"], room["participant"]
    assert not facilitator.exceptions and not participant.exceptions
    mine = facilitator.received_bytes()
    assert b"9100000" in mine and b"Join link" in mine  # the facilitator sees the rows (and the room's panel)
    theirs = participant.received_bytes()
    assert f"col_{marker}".encode() in theirs and b"80 rows" in theirs  # the shared table's columns and size
    assert b"shares" in theirs and b"facilitator only" in theirs
    leaked = [v for v in (str(9_100_000 + i) for i in range(80)) if v.encode() in theirs]
    assert not leaked, f"raw values reached a participant: {leaked[:5]}"
    assert b"Join link" not in theirs  # the room's panel is the facilitator's


def test_rotating_the_join_link_shuts_out_the_old_one_and_the_new_one_works(room, workshop):
    loop, facilitator, participant = room["loop"], room["facilitator"], room["participant"]
    old_cookie = participant.cookie
    loop.run(facilitator.click("room.rotate"))
    tokens = set(re.findall(rb"\?token=([\w-]{20,})", facilitator.received_bytes())) - {workshop["join"].encode()}
    assert len(tokens) == 1, "the facilitator's panel shows no new join link"
    assert _get(workshop["url"] + "/", old_cookie)[0] == 403
    assert _get(workshop["url"] + f"/?token={workshop['join']}")[0] == 403
    before = len(participant.received)
    loop.run(participant.rerun())
    assert b"join link has changed" in b"".join(participant.received[before:])
    fresh = tokens.pop().decode()
    assert _get(workshop["url"] + f"/?token={fresh}")[0] == 303
