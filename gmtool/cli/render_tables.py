"""Live tables for people: summaries (also the JSON of `tables list/show`), rows, watch."""

from __future__ import annotations

import time

from gmtool.cli.console import Console
from gmtool.cli.formats import coins as _coins
from gmtool.house.lock import STALE_S  # a host silent this long is gone


def table_summaries(store, include_closed: bool = False) -> list[dict]:
    """Each table's public state with the time left computed now (game seconds).

    Deadlines are read on the host's clock, relative to the moment the host published
    the snapshot (`published_at`), and the snapshot's age on the reader's clock is taken
    off: so a host on another machine, or on virtual time, is read right.
    """
    from gmtool.store.tables import list_tables

    now = time.time()
    out = []
    for row in list_tables(store, include_closed):
        live = row["live"] or {}
        running = live.get("running")
        published = live.get("published_at", now)
        now_on_host = published + max(0.0, now - published)  # the host's clock, read now
        summary = {
            "id": row["id"],
            "system": row["profile_id"],
            "room": row["tier"],
            "game": row["game"],
            "status": row["status"],
            "config_id": live.get("config_id"),
            "seated": live.get("seated", []),
            "hand": live.get("hand"),
            "hand_number": live.get("hand_number"),
            "updated_at": row["updated_at"],
            "host_seen_s": _age(row["updated_at"], now),
            "snapshot_age_s": round(max(0.0, now - published), 1)
            if "published_at" in live
            else None,
        }
        summary["host"] = _host_state(summary)
        if "people" in live:  # a host with the player gateway (`house run --listen`)
            summary["people"] = [_person(p, now_on_host) for p in live["people"]]
        for key in ("owner", "ante", "phase"):
            if key in live:
                summary[key] = live[key]
        if running:
            speed = running.get("speed", 1)
            summary.update(
                street=running.get("street"),
                pot=running["pot"],
                to_act=running["to_act"],
                seconds_left=max(0.0, round((running["deadline_at"] - now_on_host) * speed, 1)),
                players=[
                    {
                        k: p.get(k)
                        for k in (
                            "name",
                            "coins",
                            "total",
                            "folded",
                            "connected",
                            "showing",
                            "seen",
                        )
                    }
                    for p in running["players"]
                ],
            )
            for player in summary["players"]:
                if not player["connected"]:
                    window = (running["window_deadline_at"] - now_on_host) * speed
                    player["reconnect_left_s"] = (
                        max(0.0, round(window, 1)) if player["name"] == running["to_act"] else None
                    )  # the window runs on their turn
        out.append(summary)
    return out


# `tables list`/`watch`: what is never cut short, and what goes first on a narrow screen
KEEP = ("table", "to act", "pot", "host")
DROP = ("config", "system", "coins", "people", "disconnected", "room", "players", "street", "left")


def _person(person: dict, now_on_host: float) -> dict:
    """A person at the table: connected for how long, or away for how long (S18)."""
    out = {"name": person.get("name"), "joining": bool(person.get("joining"))}
    for key, since in (("connected_s", "connected_since"), ("away_s", "away_since")):
        stamp = person.get(since)
        out[key] = round(max(0.0, now_on_host - stamp), 1) if stamp is not None else None
    return out


def _people(people: list[dict]) -> str:
    def one(p: dict) -> str:
        if p["away_s"] is not None:
            state = f"away {p['away_s']:.0f} s (reconnect window running)"
        elif p["connected_s"] is not None:
            state = f"connected {p['connected_s']:.0f} s"
        else:
            state = "not connected"
        return f"{p['name']} ({state}{', joining at the next hand' if p['joining'] else ''})"

    return "people: " + ("; ".join(map(one, people)) or "none")


def _age(stamp: str | None, now: float) -> float | None:
    from datetime import datetime

    if not stamp:
        return None
    try:
        return round(max(0.0, now - datetime.fromisoformat(stamp).timestamp()), 1)
    except ValueError:
        return None


def _host_state(summary: dict) -> str:
    """ "live" while the host keeps saying so; "gone" once it stopped (killed, or hung)."""
    if summary["status"] != "open":
        return summary["status"]
    seen = summary["host_seen_s"]
    return "live" if seen is not None and seen <= STALE_S else "gone"


def table_rows(summaries: list[dict]) -> tuple[list[str], list[list]]:
    columns = [
        "table",
        "system",
        "room",
        "config",
        "players",
        "coins",
        "pot",
        "street",
        "to act",
        "left",
        "disconnected",
        "people",
        "host",
    ]
    rows = []
    for s in summaries:
        players = s.get("players") or []
        coins = amount(sum(p["coins"] or 0 for p in players)) if players else ""
        away = ", ".join(_away(p) for p in players if not p["connected"])
        host = s["host"] if s["host"] != "gone" else f"gone ({_ago(s['host_seen_s'])})"
        rows.append(
            [
                s["id"],
                s["system"],
                s["room"],
                (s["config_id"] or "")[:12],
                len(s["seated"]),
                coins,
                amount(s["pot"]) if "pot" in s else "",
                s.get("street") or "",
                s.get("to_act")
                or (s.get("phase") or "").replace("_", " ")  # "setting ante": words
                or ("idle" if s["status"] == "open" else ""),  # the host column says why
                f"{s['seconds_left']:.0f}s" if "seconds_left" in s else "",
                away,
                _people_count(s.get("people")),
                host,
            ]
        )
    return columns, rows


def _people_count(people: list[dict] | None) -> str:
    """People at the table through the gateway: how many connected, how many away."""
    if not people:
        return ""
    away = sum(p["away_s"] is not None for p in people)
    on = sum(p["connected_s"] is not None for p in people)
    return f"{on} on" + (f", {away} away" if away else "")


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "never seen"
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"last seen {seconds / size:.0f}{unit} ago"
    return f"last seen {seconds:.0f}s ago"


def render_tables(summaries: list[dict]) -> None:
    """`tables list` as text: one row a table."""
    from gmtool.cli.console import console

    columns, rows = table_rows(summaries)
    console.table(
        f"{len(summaries)} table(s)", columns, rows, right_align=(4, 5, 6), keep=KEEP, drop=DROP
    )


def _away(player: dict) -> str:
    left = player.get("reconnect_left_s")
    return (
        f"{player['name']} ({left:.0f}s to reconnect)"
        if left is not None
        else f"{player['name']} (window starts on their turn)"
    )


def render_table(s: dict) -> list[str]:
    host = (
        "host live"
        if s["host"] == "live"
        else (
            f"HOST GONE ({_ago(s['host_seen_s'])}): what follows may be out of date"
            if s["host"] == "gone"
            else s["host"]
        )
    )
    age = (
        f", snapshot {s['snapshot_age_s']:.0f} s old" if s.get("snapshot_age_s") is not None else ""
    )
    lines = [
        f"table {s['id']}: {s['system']} / {s['room']} ({s['game']}), {host}{age}",
        f"config {s['config_id'] or '-'}, hand {s.get('hand') or '-'}"
        + (f" (#{s['hand_number']} at this table)" if s.get("hand_number") else ""),
    ]
    if "owner" in s:
        lines.append(f"owner {s['owner']}, ante {amount(s['ante'])}, phase {s['phase']}")
    if "people" in s:
        lines.append(_people(s["people"]))
    if not s.get("players"):
        lines.append(f"no hand running; seated: {', '.join(s['seated']) or 'nobody'}")
        return lines
    lines.append(
        f"street {s.get('street') or '-'}, pot {amount(s['pot'])}, to act {s['to_act']} "
        f"({s['seconds_left']:.0f} s left)"
    )
    for p in s["players"]:
        state = "folded" if p["folded"] else "in"
        if not p["connected"]:
            state += ", disconnected: " + _away(p)
        showing = " ".join(p["showing"]) if p["showing"] else "-"
        lines.append(
            f"  {p['name']:<12} coins {amount(p['coins']):>13}  in pot {amount(p['total']):>9}  "
            f"showing {showing:<14} {state}"
        )
    return lines


def watched(store, table: str | None) -> tuple[str, list, list]:
    """One refresh of `tables watch`: its title, columns and rows."""
    summaries = [s for s in table_summaries(store) if table in (None, s["id"])]
    columns, rows = table_rows(summaries)
    return f"{len(summaries)} table(s) - {time.strftime('%H:%M:%S')}", columns, rows


def watch_tables(
    store, table: str | None, interval: float, count: int | None, console: Console
) -> None:
    """Refresh in place with rich Live on a terminal; plain snapshots elsewhere (a pipe or
    a file: each refresh written as it comes, until the reader leaves)."""
    from rich.console import Console as RichConsole
    from rich.live import Live

    from gmtool.cli.console import output_width, rich_table

    live_view = console.out.isatty()
    width = None if live_view else output_width(console.out)  # a terminal: its own
    rich_console = RichConsole(file=console.out, width=width)

    def snapshot():
        title, columns, rows = watched(store, table)
        return rich_table(
            columns,
            rows,
            rich_console.width,
            right_align=(4, 5, 6),
            keep=KEEP,
            drop=DROP,
            title=title,
        )

    def write(live) -> bool:
        """One refresh; False once nobody reads any more."""
        if live is not None:
            live.update(snapshot(), refresh=True)
            return True
        title, columns, rows = watched(store, table)
        console.table(title, columns, rows, (4, 5, 6), KEEP, DROP)
        console.line()
        console.flush()
        return not console.reader_left

    def loop(live) -> None:
        shown = 0
        while count is None or shown < count:
            shown += 1
            if not write(live) or (count is not None and shown >= count):
                break
            time.sleep(interval)

    try:
        if not live_view:
            loop(None)
            return
        with Live(snapshot(), console=rich_console, auto_refresh=False) as live:
            loop(live)
    except KeyboardInterrupt:
        pass


def command_lines(outcome: dict) -> list[str]:
    """What the host did with a kick or close it carried out."""
    from gmtool.cli.render_gm import close_words, kick_words, settlement_words

    if "closed" in outcome:
        return [close_words(outcome)]
    lines = [kick_words(outcome)]
    settlement = outcome.get("settlement")
    if settlement:
        lines.append("settlement: " + settlement_words(settlement))
    return lines


def amount(value) -> str:
    """Coins as text output writes them; a missing amount (None) as nothing."""
    return _coins(value) if isinstance(value, int) else str(value if value is not None else "")
