"""Read-only queries for the console: hands, players, the GM log."""

from __future__ import annotations

import json

from gmtool.errors import Damaged
from gmtool.store import dialect
from gmtool.store.db import NoSuchRecord, Store


def hand_filter(
    store: Store,
    since: str | None = None,
    until: str | None = None,
    table: str | None = None,
    player: str | None = None,
) -> tuple[str, list]:
    clauses, params = [], []
    for clause, value in (
        ("started_at >= ?", since),
        ("started_at < ?", until),
        ("table_id = ?", table),
    ):
        if value:
            clauses.append(clause)
            params.append(value)
    if player:
        clauses.append(dialect.statement(store, "queries.seated"))
        params.append(player)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def check_names(store: Store, table: str | None = None, player: str | None = None) -> None:
    """NoSuchRecord for a filter naming a table or player the store has never seen: an
    unknown name is a mistake to report, not an empty result."""
    if (
        table
        and store.one(
            "SELECT 1 FROM tables WHERE id = ? UNION ALL SELECT 1 FROM hands "
            "WHERE table_id = ? LIMIT 1",
            (table, table),
        )
        is None
    ):
        raise NoSuchRecord(f"no table {table!r} (see `gmtool tables list --closed`)")
    if player and store.one("SELECT 1 FROM players WHERE name = ?", (player,)) is None:
        raise NoSuchRecord(f"no player {player!r} (see `gmtool players list`)")


def list_hands(
    store: Store, since=None, until=None, table=None, player=None, limit: int = 50
) -> list[dict]:
    """Hands matching the filter, newest first; at most `limit` of them (0 = all)."""
    check_names(store, table, player)
    where, params = hand_filter(store, since, until, table, player)
    rows = store.all(
        f"SELECT id, table_id, number, config_id, tier, banker, seats, started_at, "
        f"ended_at, outcome, winners FROM hands{where} ORDER BY id DESC LIMIT ?",
        [*params, dialect.no_limit(store, limit)],
    )
    return [
        dict(r)
        | {
            "seats": _json(r["seats"], f"hand {r['id']}'s seats"),
            "winners": _json(r["winners"], f"hand {r['id']}'s winners") if r["winners"] else [],
        }
        for r in rows
    ]


def _object(text: object, what: str) -> dict:
    value = _json(text, what)
    if not isinstance(value, dict):
        raise Damaged(f"{what} in the store is not a JSON object: the store was edited")
    return value


def _json(text: object, what: str):
    """A JSON column's value; Damaged, naming `what`, when it is not JSON gmtool wrote."""
    try:
        return json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Damaged(
            f"{what} in the store is not JSON: the store was edited (`gmtool audit` says what "
            "else changed)"
        ) from None


def hand(store: Store, hand_id: int) -> dict:
    row = store.one(
        "SELECT h.*, c.profile_id, c.version, c.title FROM hands h JOIN configs c "
        "USING (config_id) WHERE h.id = ?",
        (hand_id,),
    )
    if row is None:
        raise NoSuchRecord(f"no hand {hand_id} (see `gmtool hands list`)")
    out = dict(row)
    out["seats"] = _json(row["seats"], f"hand {hand_id}'s seats")
    out["winners"] = _json(row["winners"], f"hand {hand_id}'s winners") if row["winners"] else []
    return out


def hand_events(store: Store, hand_id: int) -> list[dict]:
    return [
        {"seq": r["seq"], "type": r["type"], **_object(r["payload"], f"event {r['seq']}")}
        for r in store.all(
            "SELECT seq, type, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand_id,)
        )
    ]


def player(store: Store, name: str, recent: int = 10) -> dict:
    row = store.one("SELECT * FROM players WHERE name = ?", (name,))
    if row is None:
        raise NoSuchRecord(f"no player {name!r}")
    seat = store.one("SELECT table_id, seat FROM seats WHERE player = ?", (name,))
    hands = store.all(dialect.statement(store, "queries.recent_hands"), (name, name, recent))
    rows = store.all(
        "SELECT id, hand_id, gm_action_id, delta, reason, created_at FROM ledger "
        "WHERE player = ? ORDER BY id DESC LIMIT ?",
        (name, recent * 2),
    )
    return {
        **dict(row),
        "table": dict(seat) if seat else None,
        "recent_hands": [dict(h) for h in hands],
        "ledger": [dict(r) for r in rows],
    }


def player_with_titles(store: Store, name: str, recent: int = 10) -> dict:
    """`player` plus the player's title under every active ladder (RULES S23, D-3)."""
    from gmtool.engine.settlement import player_title

    found = player(store, name, recent)
    found["titles"] = {
        profile: player_title(found["coins"], found["score"], ladder)
        for profile, ladder in ladders(store).items()
    }
    return found


def players_with_titles(store: Store, limit: int = 50) -> dict:
    """{"players": [...], "total": N}: the richest `limit` players (0 = all) with their
    coins, score, the table they sit at, and their title under every active ladder."""
    from gmtool.engine.settlement import player_title

    active = ladders(store)
    rows = store.all(
        "SELECT p.name, p.kind, p.coins, p.score, s.table_id FROM players p LEFT "
        "JOIN seats s ON s.player = p.name ORDER BY p.coins DESC, p.name LIMIT ?",
        (dialect.no_limit(store, limit),),
    )
    players = [
        {
            "name": r["name"],
            "kind": r["kind"],
            "coins": r["coins"],
            "score": r["score"],
            "table": r["table_id"],
            "titles": {
                profile: player_title(r["coins"], r["score"], ladder)
                for profile, ladder in active.items()
            },
        }
        for r in rows
    ]
    total = store.one("SELECT COUNT(*) FROM players")[0]
    return {"players": players, "total": total}


def gm_log(store: Store, limit: int = 0) -> list[dict]:
    """The GM log in order; only the newest `limit` entries when it is not 0."""
    sql = "SELECT id, actor, action, target, reason, outcome, at, hash FROM gm_actions ORDER BY id"
    rows = store.all(sql + " DESC LIMIT ?", (dialect.no_limit(store, limit),))
    out = [
        dict(r) | {"outcome": _json(r["outcome"], f"GM action {r['id']}'s outcome")} for r in rows
    ]
    return sorted(out, key=lambda r: r["id"])


def ladders(store: Store) -> dict[str, dict]:
    """Active title ladders by profile (RULES S23)."""
    out = {}
    for row in store.all(dialect.statement(store, "queries.ladders")):
        ladder = _object(row["compiled"], f"{row['profile_id']}'s deployed config").get("ladder")
        if ladder:
            out[row["profile_id"]] = ladder
    return out


def summary(store: Store) -> dict:
    """Hands settled and voided, and the coins all players hold (the demo's last words)."""
    hands = store.one(
        "SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE outcome = 'settled') AS settled, "
        "COUNT(*) FILTER (WHERE outcome = 'voided') AS voided FROM hands"
    )
    coins = store.one("SELECT SUM(coins) AS c, COUNT(*) AS n FROM players")
    total = coins["c"] or 0
    return {
        "hands": hands["n"],
        "settled": hands["settled"] or 0,
        "voided": hands["voided"] or 0,
        "coins": int(total),  # (PostgreSQL sums BIGINTs as NUMERIC)
        "players": coins["n"],
    }


def showcase_hand(store: Store) -> int | None:
    """A settled hand worth showing: one played for coins that reached the showdown, else
    any showdown, else any settled hand."""
    row = store.one(
        "SELECT h.id FROM hands h JOIN events e ON e.hand_id = h.id AND "
        "e.type = 'showdown' JOIN events s ON s.hand_id = h.id AND s.type = "
        "'hand_started' AND s.payload LIKE '%\"training\":false%' WHERE "
        "h.outcome = 'settled' ORDER BY h.id LIMIT 1"
    )
    if row is None:
        row = store.one(
            "SELECT h.id FROM hands h JOIN events e ON e.hand_id = h.id AND "
            "e.type = 'showdown' WHERE h.outcome = 'settled' ORDER BY h.id LIMIT 1"
        )
    if row is None:
        row = store.one("SELECT id FROM hands WHERE outcome = 'settled' ORDER BY id LIMIT 1")
    return row[0] if row else None
