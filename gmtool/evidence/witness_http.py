"""The tlog-witness protocol over HTTP: the server `gmtool witness serve` runs, and the
client the host's notary and the audit use (standard library only).

Server: `POST /add-checkpoint` (tlog_witness.py decides), `GET /checkpoint/ORIGIN` (the
cosigned checkpoint it holds, for an auditor); anything else is a plain 4xx: 404 for
another path, 405 for another method, 411 without a Content-Length, 413 for a body over
64 KiB (refused before it is read), 400 for a body that is not a request. A client that
stops sending is dropped after `TIMEOUT_S`; an error inside one request answers 500 and
is logged in one line, and the witness serves on.

Client: `submit` sends a checkpoint with a consistency proof from the size the witness
holds (learnt from its 409 answer when unknown) and returns the cosignature line, checked
with the witness's recorded key; `fetch` reads the witness's cosigned checkpoint.
`Unreachable` is a witness that did not answer; `Refused` one that answered otherwise.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

from gmtool.evidence.cosign import CosignerKey
from gmtool.evidence.note import NoteError
from gmtool.evidence.tlog_witness import (
    MAX_BODY,
    SIZE_TYPE,
    TEXT,
    Reply,
    TlogWitness,
    checkpoint_text,
    request_body,
)

TIMEOUT_S = 10.0
CLIENT_TIMEOUT_S = 5.0
METHODS = "GET, POST"


class Unreachable(OSError):
    """The witness did not answer (refused, timed out, not HTTP)."""


class Refused(ValueError):
    """The witness answered, but not with what was asked."""

    def __init__(self, message: str, held: int | None = None) -> None:
        super().__init__(message)
        self.held = held  # the size it holds, when it said so (409)


# -- client ------------------------------------------------------------------------------


def check_url(url: str) -> str:
    """`url` without a trailing slash, if it is an http(s) URL a witness can be at; else
    ValueError in plain words (credentials, a query or a fragment have no place there:
    the URL is written into the store's evidence)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http:// or https:// URL of a witness")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"{url!r}: a witness URL has no user, password, query or fragment")
    try:
        parts.port  # noqa: B018 (a port that is not a number raises)
    except ValueError:
        raise ValueError(f"{url!r}: the port is not a number") from None
    return url.rstrip("/")


def _call(
    url: str, method: str, path: str, body: bytes | None, timeout: float
) -> tuple[int, str, bytes]:
    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(parts.hostname or "", parts.port, timeout=timeout)
        try:
            headers = {"Content-Type": TEXT} if body is not None else {}
            connection.request(method, parts.path.rstrip("/") + path, body, headers)
            response = connection.getresponse()
            data: bytes = response.read(MAX_BODY + 1)
            status: int = response.status
            return status, response.getheader("Content-Type") or "", data
        finally:
            connection.close()
    except (OSError, http.client.HTTPException) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise Unreachable(f"{url} did not answer ({reason})") from None


def _first_line(data: bytes) -> str:
    line = data.decode("utf-8", "replace").strip().split("\n")[0]
    return "".join(c if c.isprintable() else "?" for c in line[:200])


def fetch(url: str, origin: str, timeout: float = CLIENT_TIMEOUT_S) -> str | None:
    """The cosigned checkpoint the witness at `url` holds for `origin` (None: none)."""
    status, _, data = _call(url, "GET", "/checkpoint/" + quote(origin, safe=""), None, timeout)
    if status == 404:
        return None
    if status != 200 or len(data) > MAX_BODY:
        raise Refused(f"{url} answered {status} to a read: {_first_line(data)}")
    try:
        text: str = data.decode("utf-8")
        return text
    except UnicodeDecodeError:
        raise Refused(f"{url} answered with a body that is not text") from None


def submit(
    url: str,
    key: CosignerKey,
    note: str,
    size: int,
    proof: Callable[[int], list[bytes]],
    old: int = 0,
    timeout: float = CLIENT_TIMEOUT_S,
) -> str:
    """The witness's cosignature line over the signed checkpoint `note` (of `size`
    records), sent with `proof(old)` from the size `old` it is thought to hold."""
    text = checkpoint_text(note)
    for attempt in range(2):
        body = request_body(old, proof(old) if 0 < old < size else [], note)
        status, kind, data = _call(url, "POST", "/add-checkpoint", body, timeout)
        if status == 200:
            for line in data.decode("utf-8", "replace").splitlines():
                try:
                    if key.timestamp(text, line) is not None:
                        return str(line) + "\n"
                except NoteError as error:
                    raise Refused(f"{url}: {error}") from None
            raise Refused(f"{url} answered without a cosignature by its recorded key {key.name}")
        if status == 409 and kind.startswith(SIZE_TYPE):
            held = _size(data)
            if held is None:
                raise Refused(f"{url} answered 409 without a size")
            if held > size:
                raise Refused(
                    f"{url} holds a checkpoint of this store at {held} records, more than the "
                    f"{size} it has now (records deleted, or an older copy restored)",
                    held,
                )
            if held != old and attempt == 0:
                old = held
                continue
            raise Refused(
                f"{url} holds a different checkpoint of this store at {held} records "
                "(history was rewritten)",
                held,
            )
        if status == 422:
            raise Refused(
                f"{url} holds a checkpoint at {old} records that this store does not extend "
                "(history was rewritten before it)",
                old,
            )
        raise Refused(f"{url} refused the checkpoint at {size}: {status} {_first_line(data)}")
    raise AssertionError("unreachable")  # pragma: no cover


def _size(data: bytes) -> int | None:
    text = data.decode("ascii", "replace").strip()
    return int(text) if text.isdigit() and len(text) < 20 else None


# -- server ------------------------------------------------------------------------------


class WitnessServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], witness: TlogWitness, log: Callable[[str], None]
    ) -> None:
        super().__init__(address, Handler)
        self.witness = witness
        self.log = log

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        import sys  # (one line in the log, never a traceback)

        error = sys.exc_info()[1]
        self.log(f"{client_address[0]}: connection dropped ({type(error).__name__}: {error})")


class Handler(BaseHTTPRequestHandler):
    server: WitnessServer
    server_version = "gmtool-witness"
    protocol_version = "HTTP/1.1"
    timeout = TIMEOUT_S
    error_message_format = "%(code)d %(message)s\n"  # plain text, as every other answer
    error_content_type = TEXT

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        text = format % args
        self.server.log(
            f"{self.client_address[0]} " + "".join(c if c.isprintable() else "?" for c in text)
        )

    def _send(self, reply: Reply, close: bool = False) -> None:
        data = reply.body.encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        if reply.status == 405:
            self.send_header("Allow", METHODS)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _guarded(self, answer: Callable[[], Reply | None]) -> None:
        try:
            reply = answer()
        except Exception as error:  # a bug in one request never stops the witness
            self.server.log(f"internal error: {type(error).__name__}: {error}")
            reply = Reply(500, "internal error\n")
            self._send(reply, close=True)
            return
        if reply is not None:
            self._send(reply, close=reply.status >= 400 and reply.status != 409)

    def do_POST(self) -> None:
        self._guarded(self._post)

    def _post(self) -> Reply | None:
        if self.path != "/add-checkpoint":
            return Reply(405 if self.path.startswith("/checkpoint/") else 404, "no such call\n")
        if self.headers.get("Transfer-Encoding"):
            return Reply(411, "send the body with a Content-Length\n")
        length = self.headers.get("Content-Length")
        if length is None:
            return Reply(411, "send the body with a Content-Length\n")
        if not length.strip().isdigit() or len(length.strip()) > 19:
            return Reply(400, "the Content-Length is not a number\n")
        if int(length) > MAX_BODY:
            return Reply(413, f"a request body is at most {MAX_BODY} bytes\n")
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            self.close_connection = True
            return None  # the client went away
        return self.server.witness.add_checkpoint(body, int(time.time()))

    def do_GET(self) -> None:
        self._guarded(self._get)

    def do_HEAD(self) -> None:
        self._guarded(self._get)

    def _get(self) -> Reply:
        if self.path == "/add-checkpoint":
            return Reply(405, "add-checkpoint is a POST\n")
        if not self.path.startswith("/checkpoint/"):
            return Reply(404, "no such page: POST /add-checkpoint, GET /checkpoint/ORIGIN\n")
        try:
            origin = unquote(self.path[len("/checkpoint/") :], errors="strict")
        except UnicodeDecodeError:
            return Reply(400, "the origin is not UTF-8\n")
        held = self.server.witness.latest(origin)
        if held is None:
            return Reply(404, "no checkpoint of that log here\n")
        return Reply(200, held)

    def __getattr__(self, name: str) -> Callable[[], None]:
        if name.startswith("do_"):  # every other method: 405, never the base class's 501
            return lambda: self._guarded(lambda: Reply(405, "GET or POST only\n"))
        raise AttributeError(name)
