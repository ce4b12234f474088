"""Plain messages for what an operator gets wrong (issue 23, item 9): a file that is not
SQLite given as --db, `rules compile -o` a folder, `verify --key` given the report or any
file that is not a key, and a key defined twice in a profile. Each is one message naming
the file and what to do, with its exit code, never a traceback or Python's own words
("[Errno 21]", "'ascii' codec", "Cannot overwrite a value"), and nothing is written."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, Gmtool, gmtool_command
from helpers import clean_env, public_key

from gmtool.rules.validate import validate_bytes, validate_text

QQ = RULES / "qq-showhand.toml"
DATA = Path(__file__).resolve().parent / "data" / "profiles"
PYTHON_WORDS = ("Errno", "codec", "Cannot overwrite", "Traceback", "internal error")


def _message(run) -> str:
    out = run.stdout + run.stderr
    assert not [words for words in PYTHON_WORDS if words in out], out
    errors = [line for line in run.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, run.stderr
    return errors[0]


# -- a file that is not SQLite as --db -------------------------------------------------------


def _not_sqlite(tmp_path: Path) -> list[Path]:
    text = tmp_path / "notes.db"
    text.write_text("my notes, not a database\n" * 10, encoding="utf-8")
    noise = tmp_path / "noise.db"
    noise.write_bytes(random.Random(23).randbytes(8192))
    tiny = tmp_path / "tiny.db"
    tiny.write_bytes(b"hi\n")
    return [text, noise, tiny]


@pytest.mark.parametrize(
    "command",
    [
        ("hands", "list"),
        ("audit",),
        ("players", "adjust", "bot-001", "5", "--reason", "r", "--as", OPERATOR),
        ("db", "init", "--as", OPERATOR),
    ],
    ids=["read", "audit", "write", "db-init"],
)
def test_a_file_that_is_not_sqlite_is_not_a_database(
    gm: Gmtool, tmp_path: Path, command: tuple[str, ...]
) -> None:
    for path in _not_sqlite(tmp_path):
        before = path.read_bytes()
        message = _message(gm(*command, "--db", path, expect=2))
        assert f"{path} is not a database (not an SQLite file): check --db" in message, message
        assert path.read_bytes() == before


def test_a_truncated_store_is_still_a_damaged_store(gm: Gmtool, tmp_path: Path) -> None:
    """An SQLite file whose pages are cut off is the store, damaged: not "not a database"."""
    db = tmp_path / "store.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    gm("gm", "users", "add", "sue", "--role", "support", "--key", public_key("sue"),
       "--db", db, "--as", OPERATOR)  # fmt: skip
    with open(db, "r+b") as file:
        file.truncate(db.stat().st_size // 2)
    message = _message(gm("players", "adjust", "x", "5", "--reason", "r", "--db", db, expect=2))
    assert "damaged" in message and "not an SQLite file" not in message, message


# -- rules compile -o ------------------------------------------------------------------------


def test_rules_compile_into_a_folder_names_the_file_to_write(gm: Gmtool, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    message = _message(gm("rules", "compile", QQ, "-o", folder, expect=2))
    assert message == (
        f"error: -o {folder} is a folder: name the file to write ({folder / 'qq-showhand.json'})"
    )
    assert list(folder.iterdir()) == []


def test_rules_compile_into_a_missing_folder_says_which(gm: Gmtool, tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "qq.json"
    message = _message(gm("rules", "compile", QQ, "-o", target, expect=2))
    assert message == f"error: -o {target}: there is no folder {target.parent}"


def test_rules_compile_replaces_a_file_whole(gm: Gmtool, tmp_path: Path) -> None:
    target = tmp_path / "qq.json"
    target.write_text("an older compile\n", encoding="utf-8")
    gm("rules", "compile", QQ, "-o", target)
    assert target.read_text(encoding="utf-8") == gm("rules", "compile", QQ).stdout
    assert [p.name for p in tmp_path.iterdir()] == ["qq.json"]  # no temporary file left


def test_rules_compile_to_a_dash_writes_standard_output(tmp_path: Path) -> None:
    """`-o -` is standard output, as in most tools: it wrote a file named `-`."""
    run = subprocess.run(
        [*gmtool_command(), "rules", "compile", QQ, "-o", "-"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["config_id"]
    assert list(tmp_path.iterdir()) == []


# -- verify --key ----------------------------------------------------------------------------


def test_verify_key_given_the_report_says_the_report_goes_first(gm: Gmtool, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"hand": 12, "title": "十二", "proof": {}}\n', encoding="utf-8")
    message = _message(gm("verify", report, "--key", report, expect=2))
    assert f"--key {report} is a JSON file, not a verifier key" in message, message
    assert "gmtool verify REPORT.json --key HOST.pub" in message, message


def test_verify_key_given_a_binary_file_is_not_a_key(gm: Gmtool, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"hand": 12}\n', encoding="utf-8")
    store = tmp_path / "live.db"
    gm("db", "init", "--db", store, "--as", OPERATOR)
    message = _message(gm("verify", report, "--key", store, expect=2))
    assert f"--key {store} is not a verifier key" in message, message
    assert "<db>.checkpoint.pub" in message, message


@pytest.mark.parametrize("command", ["audit", "checkpoint verify"])
def test_key_given_a_report_or_a_store_is_not_a_key_for_audit_and_checkpoint_verify(
    command: str, gm: Gmtool, tmp_path: Path
) -> None:
    """`audit --key` and `checkpoint verify --key` read the key as `verify` does: the
    report or the store given there is named in plain words (an 'ascii' codec error before)."""
    store = tmp_path / "live.db"
    gm("db", "init", "--db", store, "--as", OPERATOR)
    report = tmp_path / "report.json"
    report.write_text('{"hand": 12, "title": "十二"}\n', encoding="utf-8")
    checkpoint = tmp_path / "000000000001.checkpoint"
    root = "A" * 43 + "="  # a checkpoint's shape (origin, size, root, a signature line)
    checkpoint.write_text(f"gmtool/x\n1\n{root}\n\n\u2014 gmtool/x AAAAAAAA\n")
    given = [checkpoint] if command == "checkpoint verify" else []
    for key, words in (
        (report, "is a JSON file, not a verifier key"),
        (store, "is not a verifier key"),
    ):
        run = gm(*command.split(), *given, "--db", store, "--key", key, expect=2)
        message = _message(run)
        assert f"{key} {words}" in message and "<db>.checkpoint.pub" in message, message
        assert "codec" not in run.stdout + run.stderr


def test_verify_of_a_binary_file_and_rules_test_of_one_say_not_utf8(
    gm: Gmtool, tmp_path: Path
) -> None:
    """A store or any binary file given as the report, or as a scenario: plain words, never
    a codec's message (a probe of issue 23 found "'utf-8' codec can't decode byte 0x89")."""
    store = tmp_path / "live.db"
    gm("db", "init", "--db", store, "--as", OPERATOR)
    binary = tmp_path / "noise.bin"
    binary.write_bytes(bytes(random.Random(23).randrange(128, 256) for _ in range(512)))
    for given in (store, binary):
        run = gm("verify", given, expect=2)
        assert _message(run) == (
            f"error: {given} is not a dispute report (not UTF-8 text): verify takes the "
            "report `gmtool hands export HAND --format json` writes"
        ), run.stderr
    run = gm("rules", "test", binary, expect=1)
    assert f"{binary}: not UTF-8 text (byte 0): a scenario is a TOML file" in run.stdout
    assert "codec" not in run.stdout + run.stderr


# -- a key defined twice ---------------------------------------------------------------------


def test_a_duplicate_key_names_the_key_and_its_first_line(gm: Gmtool) -> None:
    """The golden file defines `seats` twice in [table], on lines 7 and 9."""
    path = DATA / "invalid" / "syntax-duplicate-key.toml"
    [finding] = validate_bytes(path.read_bytes(), path.name)
    assert finding.message == "duplicate key table.seats, first on line 7"
    run = gm("rules", "validate", path, expect=1)
    assert (
        f"{path}:9:10: error [toml-syntax] duplicate key table.seats, first on line 7" in run.stdout
    )
    message = gm("rules", "compile", path, expect=1).stderr
    assert "duplicate key table.seats, first on line 7" in message, message


@pytest.mark.parametrize(
    "text, message",
    [
        ("[table]\nseats = 4\nseats = 5\n", "duplicate key table.seats, first on line 2"),
        ("[table]\nseats = 4\n[table]\nx = 1\n", "duplicate table [table], first on line 1"),
        ('[profile]\n"id" = "a"\nid = "b"\n', "duplicate key profile.id, first on line 2"),
        ("x = {a = 1, a = 2}\n", "duplicate key x.a, first on line 1"),
        ("a = 1\na.b = 2\n", "key a.b: a already holds a value (line 1)"),
        ("a = {x = 1}\na.y = 2\n", "key a.y: a already holds a value (line 1)"),
        ("a = 1\n[a.b]\n", "table [a.b]: a already holds a value (line 1)"),
        ("a.b = 1\na = 2\n", "key a is already a table (line 1)"),
        ("[a]\nb.c = 1\n[a.b]\n", "table [a.b] is already defined by the dotted key on line 2"),
        (
            '[[tiers]]\nid = "x"\n[[tiers]]\nid = "y"\nhand_cap = 1\nhand_cap = [\n  1,\n]\n',
            "duplicate key tiers[1].hand_cap, first on line 5",
        ),
    ],
    ids=[
        "key",
        "table",
        "quoted-key",
        "inline-table",
        "value-then-table",
        "inline-then-key",
        "value-then-header",
        "dotted-then-value",
        "dotted-then-header",
        "array-of-tables",
    ],
)
def test_a_key_or_table_defined_twice_is_named(text: str, message: str) -> None:
    [finding] = validate_text(text, "p.toml")
    assert (finding.code, finding.message) == ("toml-syntax", message)


@pytest.mark.parametrize("name", ["bad name/..", "ev\u202ee"])
def test_db_init_with_a_name_that_cannot_have_a_key_makes_no_store(
    gm: Gmtool, tmp_path: Path, name: str
) -> None:
    """`db init --as NAME` with a refused name: before, it said "store ready", then the
    error, and left a store with no operator; now nothing is made."""
    store = tmp_path / "new.db"
    run = gm("db", "init", "--db", store, "--as", name, expect=2)
    assert _message(run).startswith(f"error: GM {name!r} cannot have a key: ")
    assert "store ready" not in run.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("with_key", [False, True])
def test_verify_of_some_other_json_object_is_a_usage_error(
    gm: Gmtool, tmp_path: Path, with_key: bool
) -> None:
    """`gmtool verify package.json`: a JSON object with none of a report's fields is not a
    report that fails to verify (exit 1) but the wrong file (exit 2), key or no key."""
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}\n', encoding="utf-8")
    key = tmp_path / "host.pub"
    key.write_text(public_key(OPERATOR) + "\n", encoding="utf-8")
    run = gm("verify", other, *(["--key", key] if with_key else []), expect=2)
    assert _message(run) == (
        f"error: {other} is not a dispute report (a JSON object without a hand, its events "
        "or a proof): verify takes the report `gmtool hands export HAND --format json` writes"
    )
