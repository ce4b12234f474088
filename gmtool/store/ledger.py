"""Players and the ledger: coins change only by ledger rows (docs/architecture.md, "The store").

A player's `coins` column is a cached balance, always written in the same transaction
as the ledger row that changes it; audit checks that it equals the sum of the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gmtool.errors import Damaged
from gmtool.evidence import records
from gmtool.store import dialect, log_append, scan
from gmtool.store.db import NoSuchRecord, Store

TALLY_COLUMNS = {
    "win": "wins",
    "loss": "losses",
    "draw": "draws",
    "escape": "escapes",
    "disconnect": "disconnects",
}


def is_bot(store: Store, name: str) -> bool:
    """Whether `name` is a bot's account (a host enrolled it: no person plays it)."""
    row = store.one("SELECT kind FROM players WHERE name = ?", (name,))
    return row is not None and row[0] == "bot"


def ensure_player(store: Store, name: str, kind: str = "human") -> None:
    """Create the player if new (with zero coins: coins arrive through the ledger)."""
    cursor = store.conn.execute(
        "INSERT INTO players (name, coins, score, kind, created_at) VALUES (?, 0, 0, ?, ?) "
        "ON CONFLICT (name) DO NOTHING",
        (name, kind, store.now()),
    )
    if cursor.rowcount == 1:
        log_append.append_row(store, records.player_body, "players", "name", name)


def post(
    store: Store,
    rows: Iterable[tuple[str, int, str]],
    hand_id: int | None = None,
    gm_action_id: int | None = None,
) -> list[int]:
    """Ledger rows (player, delta, reason) and the balances they change; call inside write().
    Returns the new rows' ids."""
    at, ids = store.now(), []
    for player, delta, reason in rows:
        cursor = store.conn.execute(
            "UPDATE players SET coins = coins + ? WHERE name = ?", (delta, player)
        )
        if cursor.rowcount != 1:
            raise NoSuchRecord(f"no player {player!r}")
        row_id = dialect.insert_id(
            store,
            "INSERT INTO ledger (hand_id, gm_action_id, player, delta, "
            "reason, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (hand_id, gm_action_id, player, delta, reason, at),
        )
        log_append.append(
            store,
            records.ledger_body(
                {
                    "id": row_id,
                    "hand_id": hand_id,
                    "gm_action_id": gm_action_id,
                    "player": player,
                    "delta": delta,
                    "reason": reason,
                    "created_at": at,
                }
            ),
        )
        ids.append(row_id)
    return ids


def record_results(store: Store, results: dict[str, str], score: dict[str, int]) -> None:
    """Tallies (win/loss/draw/escape/disconnect counts) and score changes (RULES S22)."""
    for player, result in results.items():
        column = TALLY_COLUMNS.get(result)
        if column:
            store.conn.execute(
                f"UPDATE players SET {column} = {column} + 1 WHERE name = ?", (player,)
            )
    for player, delta in score.items():
        if delta:
            store.conn.execute(
                "UPDATE players SET score = score + ? WHERE name = ?", (delta, player)
            )


def grant(
    store: Store,
    player: str,
    amount: int,
    reason: str,
    kind: str = "human",
    gm_action_id: int | None = None,
) -> None:
    """Give a player coins through one ledger row, with no signature: an opening balance
    given so is one of a store from before the host signed them (`open_account`), and
    audit reports it once the store holds a signed one."""
    with store.write(durable=True):
        ensure_player(store, player, kind)
        post(store, [(player, amount, reason)], gm_action_id=gm_action_id)


def open_account(
    store: Store, player: str, amount: int, kind: str, vouch: Callable[[int, str, int], str]
) -> None:
    """A new player with an opening balance, in one transaction: the player, the ledger row
    and the host's signature over it, `vouch(ledger id, player, amount)`, logged beside it
    (audit takes no opening balance without it: gmtool.evidence.opening)."""
    with store.write(durable=True):
        ensure_player(store, player, kind)
        (ledger_id,) = post(store, [(player, amount, "opening_balance")])
        log_append.append(
            store, records.opening_body(ledger_id, player, amount, vouch(ledger_id, player, amount))
        )


def vouch_for_older_openings(store: Store, vouch: Callable[[int, str, int], str]) -> int:
    """A store from before the host signed opening balances: sign every one it holds, once
    (while it holds no signed one), as the log's upgrade made what a store held then
    evidence. Returns how many were signed."""
    if scan.first_signed_opening(store) is not None:  # (no write lock at every start)
        return 0
    with store.write(durable=True):
        rows = store.all(
            "SELECT id, player, delta FROM ledger WHERE reason = 'opening_balance' ORDER BY id"
        )
        if rows and scan.first_signed_opening(store) is None:  # (another writer was first)
            log_append.append_many(
                store.conn,
                [
                    records.opening_body(
                        row["id"],
                        row["player"],
                        row["delta"],
                        vouch(row["id"], row["player"], row["delta"]),
                    )
                    for row in rows
                ],
            )
            return len(rows)
    return 0


def bot_balances(store: Store) -> dict[str, int]:
    """Every bot player's coins."""
    return {
        r["name"]: r["coins"]
        for r in store.all("SELECT name, coins FROM players WHERE kind = 'bot'")
    }


def coins_or_none(store: Store, player: str, to_move: bool = False) -> int | None:
    """A player's balance, or None when there is no such player. `to_move`: read inside
    the write transaction that decides on it to move coins; on PostgreSQL the player's row
    is then held (`FOR UPDATE`) until it ends, so no other host moves them meanwhile."""
    sql = (
        dialect.statement(store, "ledger.coins_to_move")
        if to_move
        else "SELECT coins FROM players WHERE name = ?"
    )
    row = store.one(sql, (player,))
    return None if row is None else _count(row["coins"], player)


def exists(store: Store, player: str) -> bool:
    return store.one("SELECT 1 FROM players WHERE name = ?", (player,)) is not None


def coins(store: Store, player: str) -> int:
    row = store.one("SELECT coins FROM players WHERE name = ?", (player,))
    if row is None:
        raise NoSuchRecord(f"no player {player!r}")
    return _count(row["coins"], player)


def _count(value: object, player: str) -> int:
    """A balance as stored; Damaged when it is not a whole number (an edited row)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise Damaged(
            f"{player}'s coins in the store are {str(value)[:40]!r}, not a whole number: the "
            "store was edited (`gmtool audit` says what else changed)"
        )
    return value
