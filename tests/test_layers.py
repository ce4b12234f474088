"""The layers of docs/architecture.md, enforced: a lower layer never imports a higher one.

engine (pure rules) <- rules (profiles) <- store <- house / audit <- cli; evidence (the
Merkle log and signed notes, stdlib and `cryptography` only) sits beside the engine. The engine
imports no I/O, clock or global randomness at all.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gmtool"

# For each layer: the gmtool packages and third-party modules it may import.
ALLOWED = {
    "rules": ({"rules"}, {"tomlkit"}),
    "evidence": ({"evidence"}, {"cryptography"}),  # Merkle log, signed notes, keys
    "engine": ({"engine"}, set()),
    "bots": ({"bots", "engine"}, set()),  # how machine players choose: policies, strength
    "store": ({"store", "engine", "rules", "evidence"}, {"sqlite_utils", "psycopg"}),
    # the host serves the player gateway (issue 25): house uses gateway, never the reverse
    "house": (
        {"house", "store", "engine", "rules", "evidence", "bots", "gateway"},
        {"websockets"},
    ),
    "audit": ({"audit", "store", "engine", "rules", "evidence"}, {"orjson"}),  # payloads
    "ops": (
        {"ops", "house", "audit", "store", "engine", "rules", "evidence", "bots", "gateway"},
        set(),
    ),
    "sandbox": ({"sandbox", "engine", "rules"}, set()),
    # players (issue 25); the network bots (gateway/client.py) play the bots' policies
    "gateway": ({"gateway", "engine", "bots"}, {"jwt", "cryptography", "websockets"}),
    "simulate": ({"simulate", "engine", "rules", "bots"}, {"matplotlib"}),  # what-if, no store
    "cli": (
        {
            "cli",
            "ops",
            "rules",
            "engine",
            "store",
            "house",
            "audit",
            "sandbox",
            "evidence",
            "simulate",
            "bots",
            "gateway",
        },
        {"typer", "rich", "click"},
    ),
}
SHARED = {"canonical", "errors", "bounds", "findings"}  # stdlib-only modules every layer may use
ENGINE_FORBIDDEN_STDLIB = {
    "random",
    "time",
    "datetime",
    "sqlite3",
    "os",
    "sys",
    "socket",
    "asyncio",
    "subprocess",
    "threading",
    "tomllib",
    "secrets",
    "uuid",
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def _layer_modules():
    for layer in ALLOWED:
        folder = PACKAGE / layer
        if folder.is_dir():
            for path in sorted(folder.rglob("*.py")):
                yield layer, path


@pytest.mark.parametrize(
    "layer, path", list(_layer_modules()), ids=lambda v: v if isinstance(v, str) else v.name
)
def test_layer_imports_only_what_design_allows(layer: str, path: Path) -> None:
    """docs/architecture.md: the layering may not be refined; a lower layer never imports a
    higher one."""
    own, third_party = ALLOWED[layer]
    for line, module in _imports(path):
        top = module.split(".")[0]
        where = f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        if top == "gmtool":
            parts = module.split(".")
            assert len(parts) == 1 or parts[1] in own | SHARED, where
        elif top in sys.stdlib_module_names or top == "__future__":
            if layer == "engine":
                assert top not in ENGINE_FORBIDDEN_STDLIB, where + " (the engine must stay pure)"
        else:
            assert top in third_party, where


def test_every_layer_package_exists_that_this_stage_needs() -> None:
    for layer in ("rules", "engine", "cli"):
        assert (PACKAGE / layer / "__init__.py").is_file(), layer


SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|BEGIN|COMMIT|ROLLBACK|"
    r"PRAGMA|WITH)\b|\b(FROM|INTO|WHERE|JOIN)\s+[a-z_]+\b.*\b(WHERE|ORDER BY|"
    r"VALUES|SET|LIMIT|GROUP BY)\b"
)


def _strings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(PACKAGE.rglob("*.py")) if "store" not in p.relative_to(PACKAGE).parts],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_sql_is_written_only_in_the_store(path: Path) -> None:
    """docs/architecture.md: gmtool/store is the only place SQL is written (the seam a second
    backend, PostgreSQL, plugs into); no other module holds SQL text or calls a connection."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(PACKAGE.parent)
    for line, text in _strings(tree):
        assert not SQL.search(text), f"{where}:{line}: SQL outside gmtool/store: {text[:60]!r}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "conn":
            raise AssertionError(f"{where}:{node.lineno}: reaches into the store's connection")


def test_the_sql_check_finds_sql() -> None:
    """The check above fails on the kinds of SQL this codebase used to hold elsewhere."""
    for text in (
        "SELECT 1 FROM tables WHERE id = ?",
        "UPDATE gm_commands SET status = ?",
        "SELECT h.id FROM hands h JOIN events e ON e.hand_id = h.id WHERE x",
    ):
        assert SQL.search(text), text
    for text in ("select a tier from the list", "the hand WHERE it ends", "Start from here"):
        assert not SQL.search(text), text


GAME_WORDS = {"stud5", "three-card", "capped", "owner_ante"}
GAME_NAMES = {"STUD5", "THREE_CARD", "CAPPED", "OWNER_ANTE"}
REGISTRIES = {"engine/games.py", "rules/schema.py"}  # the engine's, and the format's


def _game_comparisons(tree: ast.AST):
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            if (isinstance(side, ast.Constant) and side.value in GAME_WORDS) or (
                isinstance(side, (ast.Name, ast.Attribute))
                and (getattr(side, "id", None) or getattr(side, "attr", None)) in GAME_NAMES
            ):
                yield node.lineno


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(PACKAGE.rglob("*.py")) if str(p.relative_to(PACKAGE)) not in REGISTRIES],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_game_name_comparisons_outside_the_registry(path: Path) -> None:
    """What varies by game lives in engine/games.py (and, for the profile format, in
    rules/schema.py): callers ask the registry instead of testing a game's name."""
    lines = list(_game_comparisons(ast.parse(path.read_text(encoding="utf-8"))))
    assert not lines, (
        f"{path.relative_to(PACKAGE.parent)}: compares a game or style name on line(s) {lines}"
    )


def test_the_game_name_check_finds_comparisons() -> None:
    for text in (
        'x = config["game"] == "three-card"',
        "ok = ctx.style == OWNER_ANTE",
        'y = "stud5" != game',
    ):
        assert list(_game_comparisons(ast.parse(text))), text
    assert not list(_game_comparisons(ast.parse('z = {"stud5": 1}["stud5"]')))


def test_the_table_does_not_import_the_host() -> None:
    """house/table.py knows the host only through its TableHost protocol (no circle)."""
    modules = {module for _, module in _imports(PACKAGE / "house" / "table.py")}
    assert "gmtool.house.host" not in modules, modules
