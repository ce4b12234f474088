"""The player page's files over plain HTTP on the gateway's port (issue 25 item 7): only the
known files, with their content types and a restrictive Content-Security-Policy, and the
WebSocket endpoint on the same port as before. The page itself is played in a real
browser in tests/test_browser_play.py. The tests with a host run on both store backends
(`deployed_store`, tests/backends.py)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from backends import Located, deployed_store_fixture, pg_server_fixture  # noqa: F401
from gateway_clients import answer, open_client
from helpers import gm_identity

from gmtool.gateway import pages
from gmtool.ops.gm import adjust
from gmtool.ops.player_tokens import mint

STATIC = Path(pages.__file__).resolve().parent / "static"
# Serving the page's files, a reloaded page's turn and H4's look are the gateway's and the
# engine's own: on SQLite alone (CI's time); a player's welcome, from a token minted into
# the store, runs on both.
SQLITE_ONLY = pytest.mark.parametrize("deployed_store", ["sqlite"], indirect=True)


@pytest.fixture
def listening(virtual_host, deployed_store: Located):
    """A host with one table and its gateway on a free loopback port."""
    host = virtual_host(
        deployed_store,
        plan=[("qq-showhand", "junior", "stud5")],
        tables=1,
        seed="page",
        listen="127.0.0.1:0",
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    return host


async def _get(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP/1.1 exchange over a real socket: status, headers, body."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    raw = await reader.read()  # the gateway closes after a plain answer
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def fetch(host, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()
    return host.stepper.run(_get(host.host.gateway.url, request))


SERVED = [
    ("/play", "text/html", b"<!doctype html>"),
    ("/play/", "text/html", b"<!doctype html>"),
    ("/play?table=x", "text/html", b"<!doctype html>"),
    ("/play/play.js", "text/javascript", b"// The player page"),
    ("/play/play.css", "text/css", b"/* The player page"),
    ("/play/icon.svg", "image/svg+xml", b"<svg"),
]
NOT_SERVED = [
    "/play/../gateway/pages.py",
    "/play/..%2fpages.py",
    "/play/%2e%2e/%2e%2e/pyproject.toml",
    "/play//play.js",
    "/play/static/play.js",
    "/play/schemas/client.schema.json",
    "/play.js",
    "/etc/passwd",
    "/PLAY",
]


@SQLITE_ONLY
def test_the_page_and_its_files_and_only_they_are_served_on_the_gateway_port(listening) -> None:
    for path, kind, start in SERVED:
        status, headers, body = fetch(listening, path)
        assert status == 200, path
        assert headers["content-type"] == f"{kind}; charset=utf-8", path
        assert int(headers["content-length"]) == len(body)
        assert body.startswith(start), path
        assert headers["content-security-policy"] == pages.CSP
        assert headers["x-content-type-options"] == "nosniff"
    for path in NOT_SERVED:  # no path is joined to a folder: nothing else on the disk
        status, headers, body = fetch(listening, path)
        assert status == 404, (path, body)
        assert b"import" not in body and b"{" not in body
        assert headers["content-security-policy"] == pages.CSP


def test_pages_answer_reads_the_path_whole() -> None:
    for path, _kind, _start in SERVED:
        assert pages.answer("GET", path).status == 200, path
    for path in NOT_SERVED:
        assert pages.answer("GET", path).status == 404, path
    assert pages.answer("HEAD", "/play").status == 405


def test_the_bare_address_leads_to_the_page_and_the_websocket_answers_beside(listening) -> None:
    status, headers, _ = fetch(listening, "/")
    assert (status, headers["location"]) == (302, "/play")
    assert fetch(listening, "/play", "POST")[0] == 405
    token = mint(listening.store, gm_identity("boss"), "ann", 3600)["token"]
    ann = listening.stepper.run(open_client(listening.host.gateway.url, token))
    listening.run_until(lambda: ann.of("welcome"), what="ann's welcome")
    assert ann.of("welcome")[0]["player"] == "ann" and ann.invalid == []
    listening.stepper.run(ann.close())


def test_the_csp_allows_only_the_pages_own_files_and_socket() -> None:
    rules = dict(part.strip().split(" ", 1) for part in pages.CSP.split(";"))
    assert rules["default-src"] == "'none'"
    assert rules["script-src"] == rules["style-src"] == rules["connect-src"] == "'self'"
    assert rules["frame-ancestors"] == "'none'" and rules["base-uri"] == "'none'"
    assert "unsafe" not in pages.CSP and "*" not in pages.CSP


def test_every_file_the_page_names_is_served_and_none_is_from_elsewhere() -> None:
    html = (STATIC / "play.html").read_text(encoding="utf-8")
    named = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert named and all(path in pages.FILES for path in named), named
    served = {name for name, _ in pages.FILES.values()}
    assert served == {path.name for path in STATIC.iterdir()}  # nothing shipped unserved
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        # no CDN, no font or script from another host (the SVG's namespace is no fetch)
        urls = set(re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text))
        assert urls <= {"http://www.w3.org"}, (path.name, urls)
        assert "<style" not in text and "style=" not in text, path.name  # CSP: no inline style
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), path.name  # nor inline script


def test_the_page_inserts_server_text_as_text_never_as_html() -> None:
    script = (STATIC / "play.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script, sink
    assert "new Function" not in script and 'setTimeout("' not in script


@SQLITE_ONLY
def test_a_page_reloaded_at_its_players_turn_gets_the_turn_again(listening) -> None:
    """A reloaded page may connect before the host sees the old socket drop: the new
    connection replaces the old one (4004) and gets the standing `your_turn` again."""
    url, table = listening.host.gateway.url, next(iter(listening.host.tables))
    first = listening.stepper.run(open_client(url, _token(listening), auto=False))
    listening.run_until(lambda: first.of("welcome"), what="ann's welcome")
    adjust(listening.store, gm_identity("boss"), "ann", 200_000, "test grant")
    listening.stepper.run(first.send({"type": "sit", "table": table}))
    listening.run_until(lambda: first.of("your_turn"), what="ann's turn", within=7200)
    turn = first.of("your_turn")[-1]
    seq = max(seq for seq, _ in first.events())
    second = listening.stepper.run(
        open_client(url, _token(listening), auto=False, resume={"table": table, "seq": seq})
    )
    listening.run_until(lambda: second.of("your_turn"), what="the turn again")
    assert first.close_code == 4004
    assert second.of("your_turn")[0] == turn
    assert not second.of("snapshot") and second.invalid == []
    act = answer(turn)
    listening.stepper.run(second.send(act))
    listening.run_until(
        lambda: any(
            e.get("player") == "ann" and e["type"] == act["verb"] for _, e in second.events()
        ),
        what="ann's action taken from the new page",
    )
    listening.stepper.run(second.close())


def _token(host) -> str:
    return mint(host.store, gm_identity("boss"), "ann", 3600)["token"]


@SQLITE_ONLY
def test_H4_after_a_look_the_turn_comes_again_with_the_legal_actions_of_now(
    virtual_host, deployed_store: Located
) -> None:
    """H4: a three-card player may look at their cards at their turn and still act; the
    page's buttons follow what the engine allows now (no second look, a seen player's
    amounts), so the look brings the turn again, by the same deadline."""
    host = virtual_host(
        deployed_store,
        plan=[("suihua-three-card", "chips-10", "three_card")],
        tables=1,
        seed="look",
        listen="127.0.0.1:0",
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    ann = host.stepper.run(open_client(host.host.gateway.url, _token(host), auto=False))
    host.run_until(lambda: ann.of("welcome"), what="ann's welcome")
    adjust(host.store, gm_identity("boss"), "ann", 200_000, "test grant")
    table = next(iter(host.host.tables))
    host.stepper.run(ann.send({"type": "sit", "table": table}))
    host.run_until(
        lambda: any("look" in [v["verb"] for v in t["legal"]] for t in ann.of("your_turn")),
        what="a turn of ann's where she may look",
        within=7200,
    )
    turn = ann.of("your_turn")[-1]
    host.stepper.run(ann.send({"type": "act", "table": table, "verb": "look", "id": "l1"}))
    host.run_until(lambda: ann.of("your_turn")[-1] is not turn, what="the turn again")
    again = ann.of("your_turn")[-1]
    assert "look" not in [legal["verb"] for legal in again["legal"]]
    assert again["deadline"] == turn["deadline"] and again["seq"] > turn["seq"]
    assert ann.of("error") == [] and ann.invalid == []
    host.stepper.run(ann.close())
