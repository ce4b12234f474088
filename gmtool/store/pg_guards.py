"""The audit's check of PostgreSQL's append-only guards (issue 26): what
`log_reads.missing_guards` reads from `sqlite_master` on SQLite, read from the catalog.

`store/pg_schema.py` guards each evidence table with three triggers, `T_no_update` and
`T_no_delete` (BEFORE, FOR EACH ROW) and `T_no_truncate` (BEFORE, FOR EACH STATEMENT),
all running `gmtool_append_only()`, which raises. A guard counts as in place when its
trigger is there by its name, on its table, of its timing, event and level, enabled
(not `DISABLE`d, nor left to replication sessions only), with no WHEN condition and no
column list (either would let some changes through), and runs the function as the
schema made it (a function rewritten to return without raising defuses every guard).

Not visible in the catalog: a superuser's session with `session_replication_role =
replica` fires no ordinary trigger while it lasts. What it changed is found as any
other edit is (the hashes, the log, the signed checkpoints); the guards are a barrier
for the roles `db grant` makes, not against the database's superuser.
"""

from __future__ import annotations

from typing import Any

# pg_trigger.tgtype bits: ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16, TRUNCATE 32
TGTYPE = {"update": 1 | 2 | 16, "delete": 1 | 2 | 8, "truncate": 2 | 32}
CHANGES = ("update", "delete", "truncate")
FUNCTION = "gmtool_append_only"
# The function's body as store/pg_schema.py makes it, its whitespace aside.
BODY = "BEGIN RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation'; END"

TRIGGERS = """
SELECT t.tgname, c.relname, t.tgtype, t.tgenabled, t.tgqual IS NULL,
    cardinality(t.tgattr::int2[]), p.proname, fn.nspname = n.nspname, p.prosrc
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_proc p ON p.oid = t.tgfoid
JOIN pg_namespace fn ON fn.oid = p.pronamespace
WHERE NOT t.tgisinternal AND n.nspname = current_schema()
"""


def missing_guards(store: Any, tables: tuple[str, ...]) -> list[str]:
    """The names of the guards of `tables` that are gone or defused, in table order, then
    update, delete, truncate."""
    found = {row[0]: row[1:] for row in store.conn.execute(TRIGGERS)}
    return [
        f"{table}_no_{change}"
        for table in tables
        for change in CHANGES
        if not _refuses(found.get(f"{table}_no_{change}"), table, change)
    ]


def _refuses(row: tuple | None, table: str, change: str) -> bool:
    if row is None:
        return False
    relname, tgtype, enabled, unconditional, columns, function, same_schema, source = row
    return (
        relname == table
        and tgtype == TGTYPE[change]
        and enabled in ("O", "A")  # fires in ordinary sessions (D: disabled; R: replicas)
        and unconditional
        and not columns
        and function == FUNCTION
        and same_schema
        and " ".join(str(source).split()) == BODY
    )
