"""The browser client's files (issue 25 item 7): what the gateway answers to a plain GET.

The gateway's port serves WebSocket upgrades and, beside them, the page at `/play` with its
script and style sheet, shipped in `gmtool/gateway/static/`. Only the paths named in
`FILES` are served: a request's path is looked up whole, never joined to a folder, so no
path reaches another file. Every answer carries a Content-Security-Policy that lets the
page load only its own files and open only its own host's socket (no inline script, no
other origin, no frames).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HTML, JS, CSS, SVG = "text/html", "text/javascript", "text/css", "image/svg+xml"
FILES = {  # path -> (file in static/, content type)
    "/play": ("play.html", HTML),
    "/play/": ("play.html", HTML),
    "/play/play.js": ("play.js", JS),
    "/play/play.css": ("play.css", CSS),
    "/play/icon.svg": ("icon.svg", SVG),
}
REDIRECTS = {"/": "/play"}  # a person who opens the bare address finds the page


@dataclass(frozen=True)
class Page:
    """An HTTP answer: status, reason, headers (besides Date and Connection) and body."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


def answer(method: str, target: str) -> Page:
    """The answer to `method target` (a request line's path, with any query)."""
    path = target.split("?", 1)[0]
    if method != "GET":
        return _plain(405, "Method Not Allowed", "only GET is served here\n")
    if path in REDIRECTS:
        return Page(302, "Found", (("Location", REDIRECTS[path]), *_common("text/plain", 0)), b"")
    if path not in FILES:
        return _plain(404, "Not Found", "no such page: the player page is /play\n")
    name, kind = FILES[path]
    body = _read(name)
    return Page(200, "OK", _common(kind, len(body)), body)


@cache
def _read(name: str) -> bytes:
    return (resources.files("gmtool.gateway") / "static" / name).read_bytes()


def _plain(status: int, reason: str, text: str) -> Page:
    body = text.encode()
    return Page(status, reason, _common("text/plain", len(body)), body)


def _common(kind: str, length: int) -> tuple[tuple[str, str], ...]:
    return (
        ("Content-Type", f"{kind}; charset=utf-8"),
        ("Content-Length", str(length)),
        ("Content-Security-Policy", CSP),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    )
