"""The store's schema as sqlite-utils migrations (docs/architecture.md, "The store").

Each migration is applied once, in order, inside a transaction, and recorded in
`_sqlite_migrations`; `SCHEMA_VERSION` is the number of migrations this gmtool knows.
A database with a migration this version does not know was written by a newer gmtool
and is refused rather than guessed at.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("gmtool")

APPEND_ONLY = ("events", "ledger", "gm_actions")


@migrations()
def m001_initial(db: Database) -> None:
    db["players"].create(
        {
            "name": str,
            "coins": int,
            "score": int,
            "wins": int,
            "losses": int,
            "draws": int,
            "escapes": int,
            "disconnects": int,
            "kind": str,
            "created_at": str,
        },
        pk="name",
        not_null={"coins", "score"},
        defaults={
            "coins": 0,
            "score": 0,
            "wins": 0,
            "losses": 0,
            "draws": 0,
            "escapes": 0,
            "disconnects": 0,
            "kind": "human",
        },
    )
    db["configs"].create(
        {
            "config_id": str,
            "profile_id": str,
            "version": int,
            "title": str,
            "game": str,
            "compiled": str,
            "profile_text": str,
            "created_at": str,
        },
        pk="config_id",
        not_null={"compiled", "profile_id"},
    )
    db["deployments"].create(
        {
            "id": int,
            "profile_id": str,
            "rooms": str,
            "config_id": str,
            "deployed_by": str,
            "deployed_at": str,
            "active": int,
            "note": str,
        },
        pk="id",
        foreign_keys=[("config_id", "configs", "config_id")],
        not_null={"config_id"},
    )
    db["tables"].create(
        {
            "id": str,
            "profile_id": str,
            "tier": str,
            "game": str,
            "status": str,
            "host_pid": int,
            "created_at": str,
            "closed_at": str,
            "live": str,
            "updated_at": str,
        },
        pk="id",
        not_null={"profile_id", "tier", "status"},
    )
    db["seats"].create(
        {
            "table_id": str,
            "seat": int,
            "player": str,
            "joined_at": str,
        },
        pk=("table_id", "seat"),
        foreign_keys=[("table_id", "tables", "id"), ("player", "players", "name")],
    )
    db["hands"].create(
        {
            "id": int,
            "table_id": str,
            "number": int,
            "config_id": str,
            "tier": str,
            "banker": str,
            "ante": int,
            "seats": str,
            "commitment": str,
            "algorithm": str,
            "seed": str,
            "started_at": str,
            "ended_at": str,
            "outcome": str,
            "winners": str,
        },
        pk="id",
        not_null={"table_id", "config_id", "commitment", "outcome"},
        foreign_keys=[("table_id", "tables", "id"), ("config_id", "configs", "config_id")],
    )
    db["events"].create(
        {
            "id": int,
            "table_id": str,
            "hand_id": int,
            "seq": int,
            "type": str,
            "payload": str,
            "created_at": str,
            "prev_hash": str,
            "hash": str,
        },
        pk="id",
        not_null={"table_id", "seq", "type", "payload", "prev_hash", "hash"},
    )
    db["gm_users"].create(
        {"name": str, "role": str, "created_at": str}, pk="name", not_null={"role"}
    )
    db["gm_actions"].create(
        {
            "id": int,
            "actor": str,
            "action": str,
            "target": str,
            "reason": str,
            "outcome": str,
            "at": str,
            "prev_hash": str,
            "hash": str,
        },
        pk="id",
        not_null={"action", "prev_hash", "hash"},
    )
    db["ledger"].create(
        {
            "id": int,
            "hand_id": int,
            "gm_action_id": int,
            "player": str,
            "delta": int,
            "reason": str,
            "created_at": str,
        },
        pk="id",
        not_null={"player", "delta", "reason"},
        foreign_keys=[
            ("hand_id", "hands", "id"),
            ("gm_action_id", "gm_actions", "id"),
            ("player", "players", "name"),
        ],
    )
    db["gm_commands"].create(
        {
            "id": int,
            "kind": str,
            "table_id": str,
            "player": str,
            "reason": str,
            "issued_by": str,
            "issued_at": str,
            "status": str,
            "acked_at": str,
            "outcome": str,
            "gm_action_id": int,
        },
        pk="id",
        not_null={"kind", "table_id", "status"},
    )
    db["events"].create_index(["table_id", "seq"], unique=True)
    db["events"].create_index(["hand_id", "seq"])
    db["hands"].create_index(["table_id", "number"], unique=True)
    db["hands"].create_index(["started_at"])
    db["ledger"].create_index(["player"])
    db["ledger"].create_index(["hand_id"])
    db["gm_commands"].create_index(["status", "table_id"])
    db["deployments"].create_index(["profile_id", "active"])
    for table in APPEND_ONLY:
        for change in ("UPDATE", "DELETE"):
            db.execute(
                f"CREATE TRIGGER {table}_no_{change.lower()} BEFORE {change} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"
            )


@migrations()
def m002_chain_heads(db: Database) -> None:
    """The last link of every chain, written with it: a deleted tail is then detectable."""
    db["chain_heads"].create(
        {"name": str, "seq": int, "hash": str}, pk="name", not_null={"seq", "hash"}
    )
    db.execute(
        "INSERT INTO chain_heads (name, seq, hash) SELECT 'events:' || table_id, seq, "
        "hash FROM events e WHERE seq = (SELECT MAX(seq) FROM events WHERE table_id = "
        "e.table_id)"
    )
    db.execute(
        "INSERT INTO chain_heads (name, seq, hash) SELECT 'gm_actions', id, hash FROM "
        "gm_actions WHERE id = (SELECT MAX(id) FROM gm_actions)"
    )


@migrations()
def m003_evidence_log(db: Database) -> None:
    """The evidence log (store/log_append.py), its tree state and interior nodes, and the
    store's identity (the origin its checkpoints name). What a store held before this
    migration is logged now, in a fixed order: it is evidence from this moment on, in the
    record format of its time (store/migration_records.py)."""
    from gmtool.store import log_append
    from gmtool.store import migration_records as v1

    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta (key, value) VALUES ('store_id', ?)", [log_append.new_store_id()])
    db.execute(
        "CREATE TABLE log (idx INTEGER PRIMARY KEY, kind TEXT NOT NULL, tkey TEXT, "
        "nkey INTEGER, body TEXT NOT NULL, leaf BLOB NOT NULL)"
    )
    db.execute("CREATE INDEX log_kind_key ON log (kind, tkey, nkey)")
    db.execute(
        "CREATE TABLE log_nodes (level INTEGER NOT NULL, idx INTEGER NOT NULL, "
        "hash BLOB NOT NULL, PRIMARY KEY (level, idx)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE log_state (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER "
        "NOT NULL, nodes BLOB NOT NULL)"
    )
    for table in ("log", "log_nodes", "meta"):
        for change in ("UPDATE", "DELETE"):
            db.execute(
                f"CREATE TRIGGER {table}_no_{change.lower()} BEFORE {change} ON "
                f"{table} BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )
    conn = db.conn

    def rows(sql: str) -> list[dict]:
        cursor = conn.execute(sql)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row)) for row in cursor]

    bodies = [v1.player_v1(r) for r in rows("SELECT * FROM players ORDER BY rowid")]
    bodies += [v1.config_v1(r) for r in rows("SELECT config_id FROM configs ORDER BY rowid")]
    bodies += [v1.deployment_v1(r) for r in rows("SELECT * FROM deployments ORDER BY id")]
    bodies += [v1.gm_user_v1(r) for r in rows("SELECT * FROM gm_users ORDER BY rowid")]
    for hand in rows("SELECT * FROM hands ORDER BY id"):
        bodies.append(v1.hand_v1(hand))
        if hand["outcome"] != "running":
            bodies.append(v1.hand_end_v1(hand))
    bodies += [
        v1.events_v1(r["table_id"], r["first"], r["last"], r["head"])
        for r in rows(
            "SELECT table_id, MIN(seq) AS first, MAX(seq) AS last, (SELECT "
            "hash FROM events e WHERE e.table_id = events.table_id ORDER BY "
            "seq DESC LIMIT 1) AS head FROM events GROUP BY table_id ORDER "
            "BY table_id"
        )
    ]
    bodies += [v1.ledger_v1(r) for r in rows("SELECT * FROM ledger ORDER BY id")]
    bodies += [v1.gm_action_v1(r) for r in rows("SELECT id, hash FROM gm_actions ORDER BY id")]
    if bodies:
        log_append.append_many(conn, bodies)


@migrations()
def m004_gm_keys(db: Database) -> None:
    """GM keys and signed requests: each GM user's registered verifier key, the signed
    request behind each GM action and command, and commands in the evidence log (those
    already made are logged now, without a request)."""
    from gmtool.store import log_append
    from gmtool.store import migration_records as v1

    db.execute("ALTER TABLE gm_users ADD COLUMN key TEXT")
    db.execute("ALTER TABLE gm_actions ADD COLUMN request TEXT")
    db.execute("ALTER TABLE gm_commands ADD COLUMN request TEXT")
    db.execute("CREATE UNIQUE INDEX gm_commands_request ON gm_commands (request)")
    cursor = db.conn.execute("SELECT * FROM gm_commands ORDER BY id")
    names = [c[0] for c in cursor.description]
    bodies = [v1.gm_request_v1(dict(zip(names, row))) for row in cursor]
    if bodies:
        log_append.append_many(db.conn, bodies)


@migrations()
def m005_witnesses(db: Database) -> None:
    """The store's witnesses (store/witnesses.py): every change to where its signed
    checkpoints are kept, append-only and logged with each change. A store from before
    records none; its next host start (or an operator) records the first."""
    db.execute(
        "CREATE TABLE witnesses (id INTEGER PRIMARY KEY, change TEXT NOT NULL, type TEXT NOT "
        "NULL, location TEXT NOT NULL, key TEXT, gm_action_id INTEGER REFERENCES "
        "gm_actions (id), at TEXT NOT NULL)"
    )
    for change in ("UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER witnesses_no_{change.lower()} BEFORE {change} ON witnesses "
            "BEGIN SELECT RAISE(ABORT, 'witnesses are append-only'); END"
        )


@migrations()
def m006_table_leases(db: Database) -> None:
    """Which live host plays each table (store/table_leases.py): one row a table, its
    holder, fencing token and expiry. Not evidence: it says who may write."""
    db.execute(
        "CREATE TABLE table_leases (table_id TEXT PRIMARY KEY, host TEXT NOT NULL, token "
        "INTEGER NOT NULL, expires REAL NOT NULL)"
    )


@migrations()
def m007_hand_hosts(db: Database) -> None:
    """Which host dealt each hand (a store several hosts share: each has a seed key of its
    own, gmtool/evidence/hand_seeds.py). NULL for the hands of a store's one host."""
    db.execute("ALTER TABLE hands ADD COLUMN host TEXT")


@migrations()
def m008_console_words(db: Database) -> None:
    """A waiting console's word on a PostgreSQL store (store/console_words.py): one row a
    pending GM command, by its request's digest. A SQLite store keeps the word in a lease
    file beside it (house/lease.py), so this table stays empty there. Not evidence."""
    db.execute(
        "CREATE TABLE console_words (digest TEXT PRIMARY KEY, note TEXT NOT NULL, "
        "written_at REAL NOT NULL)"
    )


@migrations()
def m009_host_addresses(db: Database) -> None:
    """Where players reach each live host's gateway (store/host_addresses.py): one row a
    host, renewed with its leases. Not evidence: it says where to connect."""
    db.execute(
        "CREATE TABLE host_addresses (host TEXT PRIMARY KEY, address TEXT NOT NULL, "
        "expires REAL NOT NULL)"
    )


KNOWN = (
    m001_initial.__name__,
    m002_chain_heads.__name__,
    m003_evidence_log.__name__,
    m004_gm_keys.__name__,
    m005_witnesses.__name__,
    m006_table_leases.__name__,
    m007_hand_hosts.__name__,
    m008_console_words.__name__,
    m009_host_addresses.__name__,
)  # every migration above, in order
SCHEMA_VERSION = len(KNOWN)


def schema_state(db: Database) -> str:
    """ "empty", "foreign" (another application's database), "current", "old" (migrations
    pending) or "newer" (migrations this gmtool does not know)."""
    tables = set(db.table_names())
    if not tables:
        return "empty"
    if "_sqlite_migrations" not in tables:
        return "foreign"  # tables, but not ours: never add gmtool's to someone's database
    applied = {m.name for m in migrations.applied(db)}
    known = set(KNOWN)
    if applied - known:
        return "newer"
    return "current" if applied == known else "old"


def migrate(db: Database) -> None:
    migrations.apply(db)
