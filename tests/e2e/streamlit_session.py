"""A Streamlit session driven over the server's own protocol, without a browser: the websocket at ``/_stcore/stream``
(protobuf ``BackMsg`` in, ``ForwardMsg`` out) and the upload endpoint ``/_stcore/upload_file/{session}/{file}``.

It does what the frontend does for the steps it needs (open a page with a query string, upload a file to a
``st.file_uploader``, wait for the script run to finish) and keeps every message the server sent the session, so a
test can look for values in everything the session received, shown or not. The concurrency test uses it: what it
checks (sessions kept apart, memory, nothing on disk) is the server's behaviour, and ten Chromium tabs cost about
55 CPU seconds of a 2-core machine to check it. The messages are Streamlit's (``streamlit.proto``, pinned with
Streamlit in requirements.txt); a change of protocol shows up as a failure to open the page, not as a pass.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import threading
import urllib.request
import uuid

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Common_pb2 import FileUploaderState, FileURLs, UploadedFileInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

#: A script run's end that is final (not a run stopped early for another one).
_FINAL = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}


class StreamlitSession:
    """One session of the app at ``url`` (``http://host:port/``) on page ``page`` with ``query_string``."""

    def __init__(self, url: str, page: str, query_string: str = "", cookie: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.page = page
        self.query_string = query_string
        self.cookie = cookie  #: a ``name=value`` cookie sent with every request (a workshop server's room cookie)
        self.widgets: dict[str, str] = {}
        self.address_query = ""  #: the query string the app last wrote into the address bar (``sid=…`` and the scenario)  #: widget ids by the key the script gave them (``room.share`` …)
        self.received: list[bytes] = []  #: every ForwardMsg the server sent, serialized
        self.exceptions: list[str] = []  #: st.exception elements the script drew (a traceback on the page)
        self.session_id: str | None = None
        self.uploader_id: str | None = None  #: the widget id of the page's st.file_uploader, once drawn
        self._finished = asyncio.Event()
        self._websocket = None
        self._reader: asyncio.Task | None = None

    async def open(self, timeout: float = 120) -> None:
        """Connect and run the page once, as a browser opening ``url/page?query_string`` does."""
        self._websocket = await websockets.connect(
            self.url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"], origin=self.url,
            max_size=None, additional_headers={"Cookie": self.cookie} if self.cookie else None,
        )
        self._reader = asyncio.create_task(self._read())
        await self.rerun(timeout=timeout)

    async def rerun(self, widgets: list[WidgetState] | tuple = (), timeout: float = 120) -> None:
        """Run the script with these widget values and wait for the run to finish."""
        await self._send_rerun(widgets)
        reader = self._reader
        done, _ = await asyncio.wait({asyncio.ensure_future(self._finished.wait()), reader}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if reader in done:
            reader.result()  # the connection ended: raise what ended it
            raise ConnectionError(f"the server closed session {self.session_id} during a run")
        if not done:
            raise TimeoutError(f"the script run of session {self.session_id} did not finish within {timeout} s")

    async def click(self, key: str, timeout: float = 120) -> None:
        """Press the button the script drew with ``key`` and wait for the run it triggers."""
        assert key in self.widgets, f"the page drew no widget with key {key!r}"
        await self.rerun([WidgetState(id=self.widgets[key], trigger_value=True)], timeout=timeout)

    async def press(self, key: str) -> None:
        """Press the button the script drew with ``key`` and return at once (the run goes on: a user who leaves the
        page while it runs, :meth:`wait_for_text` to see it start)."""
        assert key in self.widgets, f"the page drew no widget with key {key!r}"
        await self._send_rerun([WidgetState(id=self.widgets[key], trigger_value=True)])

    async def wait_for_text(self, text: str, timeout: float = 60, since: int = 0) -> None:
        """Wait until a message the server sent the session holds ``text`` (an element drawn, a progress bar's
        text), as a user waits to see it on the page; only the messages from the ``since``-th on (``since`` =
        ``len(session.received)`` before an action: what the action brought)."""
        needle, seen = text.encode(), since
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            received = self.received[seen:]
            if any(needle in data for data in received):
                return
            seen += len(received)
            if self._reader is not None and self._reader.done():
                self._reader.result()
                raise ConnectionError(f"the server closed session {self.session_id} before it sent {text!r}")
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"session {self.session_id} received no {text!r} within {timeout} s")
            await asyncio.sleep(0.05)

    async def upload(self, name: str, data: bytes, mime: str = "text/csv", timeout: float = 120) -> None:
        """Upload ``data`` as file ``name`` to the page's file uploader and wait for the run it triggers."""
        assert self.uploader_id is not None, "the page drew no file uploader"
        info = await asyncio.to_thread(self._put_file, name, data, mime)
        await self.rerun([WidgetState(id=self.uploader_id,
                                      file_uploader_state_value=FileUploaderState(uploaded_file_info=[info]))],
                         timeout=timeout)

    async def close(self) -> None:
        """Close the connection (the server ends the session); a session never opened or closed already: nothing."""
        if self._websocket is not None:
            await self._websocket.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    def received_bytes(self) -> bytes:
        return b"".join(self.received)

    async def _read(self) -> None:
        async for data in self._websocket:
            self.received.append(data)
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.session_id = msg.new_session.initialize.session_id
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                if element.WhichOneof("type") == "file_uploader":
                    self.uploader_id = element.file_uploader.id
                widget = getattr(element, element.WhichOneof("type") or "", None)
                widget_id = getattr(widget, "id", "")
                if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):
                    self.widgets[widget_id.split("-", 2)[-1]] = widget_id
                elif element.WhichOneof("type") == "exception":
                    self.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            elif kind == "page_info_changed":
                self.address_query = msg.page_info_changed.query_string
            elif kind == "script_finished" and msg.script_finished in _FINAL:
                self._finished.set()

    async def _send_rerun(self, widgets) -> None:
        self._finished.clear()
        state = ClientState(query_string=self.query_string, page_name=self.page,
                            widget_states=WidgetStates(widgets=list(widgets)))
        await self._websocket.send(BackMsg(rerun_script=state).SerializeToString())

    def _put_file(self, name: str, data: bytes, mime: str) -> UploadedFileInfo:
        """PUT the file the way the frontend does: multipart form, XSRF cookie and header (double submit)."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        extra = {"Cookie": self.cookie} if self.cookie else {}
        opener.open(urllib.request.Request(self.url + "/_stcore/health", headers=extra), timeout=30).read()  # XSRF
        token = next((c.value for c in jar if c.name == "_streamlit_xsrf"), "")
        if self.cookie:  # a Cookie header of our own: the jar adds none, so it carries the XSRF cookie too
            extra = {"Cookie": f"{self.cookie}; _streamlit_xsrf={token}"}
        file_id = str(uuid.uuid4())
        address = f"{self.url}/_stcore/upload_file/{self.session_id}/{file_id}"
        boundary = "studio-" + uuid.uuid4().hex
        body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                f"Content-Type: {mime}\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(address, data=body, method="PUT", headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": token, **extra})
        opener.open(request, timeout=60).read()
        return UploadedFileInfo(file_id=file_id, name=name, size=len(data),
                                file_urls=FileURLs(file_id=file_id, upload_url=address, delete_url=address))


class EventLoopThread:
    """An asyncio loop on a thread of its own, for sessions used from synchronous tests (Playwright's synchronous
    API keeps a loop running on the main thread, so ``asyncio.run`` cannot be called there)."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="streamlit-sessions", daemon=True)
        self._thread.start()

    def run(self, coroutine, timeout: float = 300):
        """Run ``coroutine`` on the loop and return its result (or raise its exception)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def close(self) -> None:
        """Cancel what is left on the loop (the websockets' keep-alive pings), then stop it."""
        self.run(_cancel_other_tasks())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


async def _cancel_other_tasks() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
