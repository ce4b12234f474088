"""The store's witnesses: where its signed checkpoints are kept, recorded as evidence.

Each change (a witness added or removed) is a row of `witnesses`, append-only, logged as
a `witness` record in the same transaction. The store's witnesses are those added and
not removed since, in order. The first may be recorded by the store's first host start
(no GM action: until then the store had none); every other change is a GM action signed
by an operator (`gmtool gm witness add|remove`), whose id the row holds and whose
outcome names the row. The audit holds the rows to their records and to those actions
(audit/witnesses.py). A store from before witnesses were recorded has no rows.

A witness is a folder or a served witness (a URL and the witness's own key, which
cosigns). A `quorum` row is no witness: it sets how many served witnesses an audit
requires to cosign a checkpoint the store extends (its location is the number; none
recorded: every served witness).
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import UsageError
from gmtool.evidence import records
from gmtool.evidence.witness import QUORUM, Witness, same_folder
from gmtool.store import log_append
from gmtool.store.db import Store, StoreError, files_beside

CHANGES = ("add", "remove", "quorum")


def recorded(store: Store) -> list[Witness]:
    """The store's witnesses now, in the order they were added (none: it records none)."""
    current: dict[tuple[str, str], Witness] = {}
    for row in store.all("SELECT change, type, location, key FROM witnesses ORDER BY id"):
        witness = Witness(row["type"], row["location"], row["key"])
        if row["change"] == "quorum":
            continue
        if row["change"] == "add":
            current[(witness.type, witness.location)] = witness
        else:
            current.pop((witness.type, witness.location), None)
    return list(current.values())


def folders(store: Store) -> list[Path]:
    """The folders of the witnesses the store records (none: it records none yet)."""
    try:
        beside = files_beside(store)
        return [
            witness.folder(beside or Path("/"))
            for witness in recorded(store)
            if not witness.served and (beside or Path(witness.location).is_absolute())
        ]
    except OSError as error:  # a type of witness this version cannot use
        raise StoreError(str(error)) from None


def unplaced(store: Store) -> list[str]:
    """The recorded witness folders named relative to a SQLite store's file, on a store
    that has none (PostgreSQL: a copy of a SQLite store records them so): no folder."""
    if files_beside(store) is not None:
        return []
    return [
        witness.location
        for witness in recorded(store)
        if not witness.served and not Path(witness.location).is_absolute()
    ]


def served(store: Store) -> list[Witness]:
    """The served witnesses (URL and key) the store records, in the order added."""
    return [witness for witness in recorded(store) if witness.served]


def quorum(store: Store) -> int:
    """How many served witnesses an audit requires to agree: the number an operator set
    last (never more than there are), else all of them."""
    count = len(served(store))
    row = store.one(
        "SELECT location FROM witnesses WHERE change = 'quorum' ORDER BY id DESC LIMIT 1"
    )
    if row is None or not str(row[0]).isdigit():
        return count
    return min(int(row[0]), count)


def quorum_change(count: int) -> Witness:
    """The record of a quorum of `count` (a `quorum` change)."""
    return Witness(QUORUM, str(count))


def quorum_set(store: Store) -> bool:
    """Whether an operator ever set the quorum (else it is every served witness)."""
    return store.one("SELECT 1 FROM witnesses WHERE change = 'quorum' LIMIT 1") is not None


def disagreement(store: Store, given: str | Path | None) -> list[Path] | None:
    """The recorded folders when `given` (a `--witness`) is not one of them, else None (it
    is one, or none was given, or the store records none). A blank one is refused."""
    if given is None:
        return None
    if not str(given).strip():
        raise UsageError("--witness is blank: name the witness folder, or leave it out")
    found = folders(store)
    if not found or any(same_folder(Path(given), folder) for folder in found):
        return None
    return found


def named(found: list[Path]) -> str:
    return ", ".join(str(folder) for folder in found)


def changes(store: Store) -> list[dict]:
    """Every change, oldest first, with who made it (the GM action's actor; none: the
    first host start)."""
    return [
        dict(row)
        for row in store.all(
            "SELECT w.id, w.change, w.type, w.location, w.key, w.gm_action_id, w.at, "
            "a.actor AS by FROM witnesses w LEFT JOIN gm_actions a ON a.id = w.gm_action_id "
            "ORDER BY w.id"
        )
    ]


def next_id(store: Store) -> int:
    """The id the next change will have (inside the caller's write transaction, so that
    the GM action logged before it can name it)."""
    return store.one("SELECT COALESCE(MAX(id), 0) + 1 FROM witnesses")[0]


def record(store: Store, change: str, witness: Witness, gm_action_id: int | None = None) -> int:
    """Record a change, logged as evidence, inside the caller's write transaction; its id."""
    if change not in CHANGES:
        raise ValueError(change)  # a bug: callers pass one of CHANGES
    witness_id = next_id(store)
    store.conn.execute(
        "INSERT INTO witnesses (id, change, type, location, key, gm_action_id, at) VALUES "
        "(?, ?, ?, ?, ?, ?, ?)",
        (
            witness_id,
            change,
            witness.type,
            witness.location,
            witness.key,
            gm_action_id,
            store.now(),
        ),
    )
    log_append.append_row(store, records.witness_body, "witnesses", "id", witness_id)
    return witness_id
