"""Streaming reads for the audit: every row it checks, in the order it checks them.

The audit reads millions of rows, so these functions hand out cursors (plain tuples, or
rows by name where the audit reads few) that SQLite steps through as the audit goes, and
PostgreSQL sends a batch at a time (server-side cursors in the audit's snapshot:
`audit_dialect.stream`); nothing here loads a whole table. The hand filter is
`queries.hand_filter`'s; SQL that differs between the dialects is `audit_dialect`'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from gmtool.store.audit_dialect import json_values, statement, stream
from gmtool.store.db import NoSuchRecord, Store
from gmtool.store.queries import check_names, hand_filter

BATCH = 5000
HAND_COLUMNS = (
    "id",
    "table_id",
    "number",
    "config_id",
    "tier",
    "banker",
    "ante",
    "seats",
    "commitment",
    "seed",
    "outcome",
    "winners",
    "algorithm",
)


def _tuples(store: Store, sql: str, params: list | tuple = ()) -> sqlite3.Cursor:
    """The rows of a query as plain tuples, stepped through as they are read."""
    return stream(store, sql, params)  # plain tuples: the scan touches millions of rows


def _rows(store: Store, sql: str, params: tuple = ()) -> Iterator[sqlite3.Row]:
    """The rows of a query by name, fetched a batch at a time."""
    cursor = stream(store, sql, params, tuples=False)
    while rows := cursor.fetchmany(BATCH):
        yield from rows


def chain_heads(store: Store, prefix: str) -> dict[str, tuple[int, str]]:
    """The recorded last link of every chain named `prefix...`: name (prefix cut) -> (seq, hash)."""
    return {
        row["name"][len(prefix) :]: (row["seq"], row["hash"])
        for row in store.all(
            "SELECT name, seq, hash FROM chain_heads WHERE name LIKE ?", (prefix + "%",)
        )
    }


def count_hands(store: Store, since=None, until=None, table=None, player=None) -> int:
    """How many hands the filter selects (NoSuchRecord for an unknown table or player)."""
    check_names(store, table, player)
    where, params = hand_filter(store, since, until, table, player)
    return store.one(f"SELECT COUNT(*) FROM hands{where}", params)[0]


def audit_tables(store: Store, since=None, until=None, table=None, player=None) -> list[str]:
    """The tables whose chains an audit walks: those with selected hands, or, unfiltered,
    every table the store knows (registered, or with a recorded chain head)."""
    if table:
        return [table]
    where, params = hand_filter(store, since, until, table, player)
    if where:
        return [
            r[0]
            for r in store.all(
                f"SELECT DISTINCT table_id FROM hands{where} ORDER BY table_id", params
            )
        ]
    return sorted(
        {r[0] for r in store.all(statement(store, "scan.table_ids"))}
        | set(chain_heads(store, "events:"))
    )  # (a table row's id is live state)


def table_hands(
    store: Store, table_id: str, since=None, until=None, table=None, player=None, from_hand: int = 0
) -> sqlite3.Cursor:
    """A table's hand rows in id order (from id `from_hand` on): `HAND_COLUMNS` plus whether
    the filter selects it. (The table's ids come from its index, sorted alone, and each
    row is read by id: no sort of whole rows.)"""
    where, params = hand_filter(store, since, until, table, player)
    selected = f"({where[7:]})" if where else "1"
    return iter(
        _tuples(
            store,
            f"SELECT {', '.join(HAND_COLUMNS)}, {selected} FROM hands WHERE id IN (SELECT "
            "id FROM hands WHERE table_id = ? AND id >= ?) ORDER BY id",
            [*params, table_id, from_hand],
        )
    )


def table_ledger(store: Store, table_id: str, from_hand: int = 0) -> sqlite3.Cursor:
    """(hand_id, player, delta, reason) of a table's hands (from id `from_hand` on), in hand
    order. (Read through the ledger's index on hand_id, for the table's hand ids in order:
    no sort of the rows.)"""
    return iter(
        _tuples(
            store,
            "SELECT hand_id, player, delta, reason FROM ledger WHERE hand_id IN (SELECT id "
            "FROM hands WHERE table_id = ? AND id >= ?) ORDER BY hand_id",
            [table_id, from_hand],
        )
    )


def table_events(store: Store, table_id: str, from_seq: int = 1) -> sqlite3.Cursor:
    """(hand_id, seq, type, payload, created_at, hash, prev_hash, id) of a table's chain
    from `from_seq` on, in chain order."""
    return _tuples(
        store,
        "SELECT hand_id, seq, type, payload, created_at, hash, prev_hash, id "
        "FROM events WHERE table_id = ? AND seq >= ? ORDER BY seq",
        [table_id, from_seq],
    )


def event_ids(store: Store) -> tuple[int, int | None, int | None]:
    """(count, least, greatest) of the events' row ids: an append-only table that SQLite
    numbers without gaps holds exactly 1 .. count."""
    # Three statements: alone, COUNT(*) counts the b-tree's cells and MIN and MAX read one
    # end of it each; together they would step through every row.
    (count,) = store.one("SELECT COUNT(*) FROM events")
    return (
        count,
        store.one("SELECT MIN(id) FROM events")[0],
        store.one("SELECT MAX(id) FROM events")[0],
    )


def chain_head(store: Store, name: str) -> tuple[int, str] | None:
    """The recorded last link (seq, hash) of one chain (`events:TABLE`, `gm_actions`)."""
    row = store.one("SELECT seq, hash FROM chain_heads WHERE name = ?", (name,))
    return (row[0], row[1]) if row else None


def table_sizes(store: Store) -> dict[str, int]:
    """Each table's recorded number of events (its chain head's seq): how long its pass is."""
    return {name: seq for name, (seq, _) in chain_heads(store, "events:").items()}


def all_events(store: Store, table_id: str | None = None) -> Iterator[sqlite3.Row]:
    """Every event row with its links, by table and sequence (or of one table)."""
    where = " WHERE table_id = ?" if table_id else ""
    return _rows(
        store,
        "SELECT table_id, hand_id, seq, type, payload, created_at, prev_hash, "
        f"hash FROM events{where} ORDER BY table_id, seq",
        (table_id,) if table_id else (),
    )


def balances(store: Store, player: str | None = None) -> Iterator[dict]:
    """(name, coins, ledger): each player's cached balance beside their ledger's sum, in
    name order. The ledger is summed in one pass over its rows (not through the index on
    player, which would visit them in random order); a sum beyond 64 bits (only an edited
    store holds one) is added up in Python instead."""
    where, params = (" WHERE player = ?", (player,)) if player else ("", ())
    try:
        sums = {
            name: int(total)  # (PostgreSQL's sum is NUMERIC: a Decimal here)
            for name, total in store.conn.execute(
                statement(store, "scan.ledger_sums").format(where=where), params
            )
        }
    except sqlite3.OperationalError:  # integer overflow (SQLite only)
        sums = {}
        for name, delta in _tuples(
            store, f"SELECT player, delta FROM ledger NOT INDEXED{where}", params
        ):
            sums[name] = sums.get(name, 0) + (delta if type(delta) is int else 0)
    where = " WHERE name = ?" if player else ""
    return iter(
        [
            {"name": name, "coins": coins, "ledger": sums.get(name, 0)}
            for name, coins in _tuples(
                store, f"SELECT name, coins FROM players{where} ORDER BY name", params
            )
        ]
    )


# The ledger and GM log checks below read rows from an id on (1: all of them; an audit
# from a checkpoint: those written after it).


def ledger_without_gm_action(store: Store, from_id: int = 1) -> Iterator[sqlite3.Row]:
    """Ledger rows naming a GM action that is not in the GM log."""
    return _rows(
        store,
        "SELECT l.id, l.player, l.gm_action_id, l.created_at FROM ledger l WHERE l.id >= ? "
        "AND l.gm_action_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM gm_actions g "
        "WHERE g.id = l.gm_action_id) ORDER BY l.id",
        (from_id,),
    )


def ledger_without_hand(store: Store, from_id: int = 1) -> Iterator[sqlite3.Row]:
    """Ledger rows naming a hand that does not exist."""
    return _rows(
        store,
        "SELECT l.id, l.player, l.hand_id, l.created_at FROM ledger l WHERE l.id >= ? AND "
        "l.hand_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM hands h WHERE h.id = "
        "l.hand_id) ORDER BY l.id",
        (from_id,),
    )


def ledger_without_cause(store: Store, from_id: int = 1) -> Iterator[sqlite3.Row]:
    """Ledger rows with neither a hand nor a GM action, other than opening balances."""
    return _rows(
        store,
        "SELECT id, player, created_at FROM ledger WHERE id >= ? AND hand_id IS NULL AND "
        "gm_action_id IS NULL AND reason NOT IN ('opening_balance') ORDER BY id",
        (from_id,),
    )


def gm_actions(store: Store, from_id: int = 1) -> Iterator[sqlite3.Row]:
    """The GM log in id order, every column."""
    return _rows(store, "SELECT * FROM gm_actions WHERE id >= ? ORDER BY id", (from_id,))


def moment_of(store: Store, kind: str, ident: object) -> object:
    """When a hand started or a GM action was logged (`kind` "hand" or "gm_action"), as
    stored; None if there is no such row."""
    sql = {
        "hand": "SELECT started_at FROM hands WHERE id = ?",
        "gm_action": "SELECT at FROM gm_actions WHERE id = ?",
    }[kind]
    row = store.one(sql, (ident,))
    return row[0] if row else None


def hand_row(store: Store, hand_id: int) -> dict:
    """One hand's row, every column (NoSuchRecord if there is none)."""
    row = store.one("SELECT * FROM hands WHERE id = ?", (hand_id,))
    if row is None:
        raise NoSuchRecord(f"no hand {hand_id} (see `gmtool hands list`)")
    return dict(row)


def hand_event_rows(store: Store, hand_id: int) -> list[tuple[int, str, str]]:
    """(seq, type, payload) of a hand's events in chain order, the payload as stored."""
    return store.all(
        "SELECT seq, type, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand_id,)
    )


def grants(store: Store, from_id: int = 1) -> Iterator[sqlite3.Row]:
    """Ledger rows that no hand made (opening balances, GM adjustments, anything else), with
    the player's first ledger row and the GM action each names."""
    return _rows(
        store,
        "SELECT l.id, l.player, l.delta, l.reason, l.gm_action_id, l.created_at, (SELECT "
        "MIN(f.id) FROM ledger f WHERE f.player = l.player) AS first_id, g.action, "
        "g.target, g.outcome FROM ledger l LEFT JOIN gm_actions g ON g.id = "
        "l.gm_action_id WHERE l.hand_id IS NULL AND l.id >= ? ORDER BY l.id",
        (from_id,),
    )


def last_settled_hands(store: Store) -> dict[str, int]:
    """Each table's last settled hand (a table's hands end in the order they began)."""
    return dict(
        store.all("SELECT table_id, MAX(id) FROM hands WHERE outcome = 'settled' GROUP BY table_id")
    )


def tallies(store: Store) -> Iterator[sqlite3.Row]:
    """Every player's name, result tallies and score (RULES S22)."""
    return _rows(
        store,
        "SELECT name, wins, losses, draws, escapes, disconnects, score FROM players ORDER BY name",
    )


def chain_names(store: Store) -> list:
    """The name of every recorded chain head."""
    return [row[0] for row in store.all("SELECT name FROM chain_heads ORDER BY name")]


def openings(store: Store, from_id: int = 1) -> Iterator[sqlite3.Row]:
    """Opening balances (ledger rows from id `from_id` on) with the log index of their
    ledger record and the body of each `opening` record naming them (NULL: none)."""
    return _rows(
        store,
        "SELECT l.id, l.player, l.delta, l.created_at, g.idx AS logged_at, o.body AS "
        "signed FROM ledger l LEFT JOIN log g ON g.kind = 'ledger' AND g.tkey IS "
        "NULL AND g.nkey = l.id LEFT JOIN log o ON o.kind = 'opening' AND o.tkey IS "
        "NULL AND o.nkey = l.id WHERE l.reason = 'opening_balance' AND l.id >= ? "
        "ORDER BY l.id",
        (from_id,),
    )


def first_signed_opening(store: Store) -> int | None:
    """The log index of the first opening balance the host signed (None: there is none)."""
    return store.conn.execute("SELECT MIN(idx) FROM log WHERE kind = 'opening'").fetchone()[0]


def adjustments_without_row(
    store: Store, from_id: int = 1, from_ledger: int = 1
) -> Iterator[sqlite3.Row]:
    """GM adjustments (from id `from_id` on) the log says were made whose ledger row (from
    id `from_ledger` on: an adjustment's row is written with it) is missing."""
    # (the ledger's GM actions as one set, built in one pass: the ledger has no index on them)
    return _rows(
        store, statement(store, "scan.adjustments_without_row"), (from_id, from_ledger, from_id)
    )


def hand_seeds(store: Store) -> sqlite3.Cursor:
    """Every hand's (id, table, number, revealed seed: NULL while it runs, the host that
    dealt it: NULL but on a shared store), as tuples."""
    return _tuples(store, "SELECT id, table_id, number, seed, host FROM hands ORDER BY id")


def shared_slots(store: Store) -> Iterator[sqlite3.Row]:
    """Hands that share a (table, number) with an earlier hand: id, table, number and that
    first hand's id, in id order (SQLite groups them: no set of slots in memory)."""
    return _rows(store, statement(store, "scan.shared_slots"))


def shared_seeds(store: Store) -> Iterator[sqlite3.Row]:
    """Hands dealt from the seed of an earlier hand: id and that first hand's id."""
    return _rows(
        store,
        "SELECT h.id, f.first FROM hands h JOIN (SELECT seed, MIN(id) AS "
        "first FROM hands WHERE seed IS NOT NULL GROUP BY seed HAVING COUNT(*) > 1) "
        "f ON h.seed = f.seed AND h.id > f.first ORDER BY h.id",
    )


def hand_seeds_around(
    store: Store, from_id: int, ids: list[int], by_seed: bool = True
) -> list[sqlite3.Row]:
    """id, table, number, seed and host of the hands from `from_id` on and of `ids`, and of
    every other hand that shares a (table, number) with one of them (through its index)
    or, with `by_seed`, a seed (one pass over the hands before `from_id`), in id order."""
    rows = store.all(
        "SELECT id, table_id, number, seed, host FROM hands WHERE id >= ? UNION ALL "
        "SELECT id, table_id, number, seed, host FROM hands WHERE id IN "
        f"({json_values(store, 'bigint')}) AND id < ?",
        (from_id, json.dumps(sorted(set(ids))), from_id),
    )
    found = {r["id"]: r for r in rows}
    if rows and by_seed:
        seeds = json.dumps([r["seed"] for r in rows if isinstance(r["seed"], str)])
        for row in store.all(
            "SELECT id, table_id, number, seed, host FROM hands WHERE id < ? AND "
            f"seed IN ({json_values(store)})",
            (from_id, seeds),
        ):
            found.setdefault(row["id"], row)
    for row in rows:
        for other in store.all(
            "SELECT id, table_id, number, seed, host FROM hands WHERE table_id = "
            "? AND number = ? AND id != ?",
            (row["table_id"], row["number"], row["id"]),
        ):
            found.setdefault(other["id"], other)
    return sorted(found.values(), key=lambda r: r["id"])
