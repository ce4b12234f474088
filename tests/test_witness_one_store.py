"""A witness folder serves one store (an outside probe of issue 23 item 4).

The probe recorded one store's witness folder as a second store's witness: the second
store's next checkpoint overwrote the first's file of the same size, the first store's
audit then found its own checkpoint "forged" and its host refused to start. And a copy of
a store hosted elsewhere signed into the original's folder (the path is recorded whole).
Now `gm witness add` refuses a folder holding another log's checkpoints, and no checkpoint
is ever written over another one of the same size (a fork), nor into another log's folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import OPERATOR, RULES

from gmtool.evidence import witness
from gmtool.evidence.witness import WitnessError


def _store(gm, folder: Path) -> Path:
    folder.mkdir(parents=True)
    db = folder / "live.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", db, "--as", OPERATOR)
    gm("checkpoint", "export", "--db", db)  # records <db>.witness and signs into it
    return db


def test_gm_witness_add_refuses_another_stores_folder(gm, tmp_path: Path) -> None:
    first, second = _store(gm, tmp_path / "a"), _store(gm, tmp_path / "b")
    folder = first.with_name(first.name + ".witness")
    before = {p.name: p.read_bytes() for p in witness.files(folder)}
    run = gm("gm", "witness", "add", folder, "--db", second, "--as", OPERATOR, expect=1)
    assert "holds the checkpoints of another store's log" in run.stderr, run.stderr
    gm("checkpoint", "export", "--db", second)
    assert {p.name: p.read_bytes() for p in witness.files(folder)} == before
    assert gm("audit", "--db", first, expect=None).returncode == 0


def _note(origin: str, size: int, root: str, signature: str = "— a sig\n") -> str:
    return f"{origin}\n{size}\n{root}\n\n{signature}"


def test_a_checkpoint_is_never_written_over_another_of_its_size(tmp_path: Path) -> None:
    folder = tmp_path / "W"
    first = _note("example.org/log", 5, "AAAA")
    witness.save(folder, first, 5)
    witness.save(folder, first, 5)  # the same checkpoint again: fine
    witness.save(folder, first + "— a witness cosignature\n", 5)  # cosigned later: fine
    with pytest.raises(WitnessError, match="another copy of this store"):
        witness.save(folder, _note("example.org/log", 5, "BBBB"), 5)
    with pytest.raises(WitnessError, match="another log"):
        witness.save(folder, _note("example.org/other", 6, "CCCC"), 6)
    assert [p.name for p in witness.files(folder)] == [f"{5:012d}{witness.SUFFIX}"]


def test_a_first_host_start_into_another_stores_folder_records_nothing(gm, tmp_path: Path) -> None:
    first = _store(gm, tmp_path / "a")
    folder = first.with_name(first.name + ".witness")
    second = tmp_path / "b" / "live.db"
    second.parent.mkdir()
    gm("db", "init", "--db", second, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", second, "--as", OPERATOR)
    run = gm("house", "run", "--hands", "1", "--witness", folder, "--db", second, expect=2)
    assert "another store" in run.stderr or "not this store's" in run.stderr, run.stderr
    listed = gm.json("gm", "witness", "list", "--db", second, "--json")
    assert str(folder) not in str(listed), listed


def test_a_copy_without_its_keys_and_witness_does_not_audit_clean(gm, tmp_path: Path) -> None:
    """A store that records a witness (its host's first start did), copied alone (no
    checkpoint keys, no witness folder): the audit says its witness holds no checkpoint,
    as it does when only the folder is gone (a second probe of issue 23 found "ok":
    deleting two more files turned a finding into a clean audit)."""
    db = _store(gm, tmp_path / "a")
    gm("house", "run", "--hands", "1", "--tables", "1", "--speed", "200", "--db", db)
    alone = tmp_path / "copy" / "live.db"
    alone.parent.mkdir()
    alone.write_bytes(db.read_bytes())
    run = gm("audit", "--db", alone, "--json", expect=1)
    assert "witness_missing" in run.stdout, run.stdout


def test_an_empty_folder_two_stores_recorded_is_named_shared(gm, tmp_path: Path) -> None:
    """Both stores record W while it is empty; the first host to sign makes it the first
    store's: the second's host will not start and its audit says the folder is shared
    (it said the first store's checkpoints were forged)."""
    folder = tmp_path / "W"
    folder.mkdir()
    first, second = tmp_path / "a" / "live.db", tmp_path / "b" / "live.db"
    for db in (second, first):
        db.parent.mkdir()
        gm("db", "init", "--db", db, "--as", OPERATOR)
        gm("deploy", RULES / "qq-showhand.toml", "--db", db, "--as", OPERATOR)
        gm("gm", "witness", "add", folder, "--db", db, "--as", OPERATOR)
        # the add is covered by a checkpoint its GM signed into W (ops/cover.py), and a
        # folder holding one store's checkpoints is refused to another: emptied here, so
        # that both stores record W while it is empty
        for path in folder.iterdir() if db == second else ():
            path.unlink()
    gm("house", "run", "--hands", "1", "--tables", "1", "--speed", "200", "--db", first)
    run = gm("house", "run", "--hands", "1", "--tables", "1", "--db", second, expect=2)
    assert "holds the checkpoints of another store's log" in run.stderr, run.stderr
    audit = gm.json("audit", "--db", second, "--json", expect=1)
    kinds = {problem["kind"] for problem in audit["problems"]}
    assert "witness_shared" in kinds and "checkpoint_signature" not in kinds, kinds


def _copy_without_witness(db: Path, folder: Path) -> Path:
    """The store and its keys copied elsewhere (not its witness: recorded by absolute path,
    the copy's record names the original's folder)."""
    folder.mkdir(parents=True)
    for suffix in ("", ".key", ".seed.key", ".checkpoint.key", ".checkpoint.pub"):
        source = db.with_name(db.name + suffix)
        if source.exists():
            (folder / source.name).write_bytes(source.read_bytes())
    return folder / db.name


def test_a_copy_does_not_sign_into_its_originals_witness(gm, tmp_path: Path) -> None:
    """Third outside probe of issue 23, item 4: a copy of a store whose witness is recorded
    by absolute path, changed and hosted, signed into the original's folder; the original's
    audit then read it as an older copy and its host would not start. Now the copy's host
    refuses (nothing signed), says how to give the copy a witness of its own, and both
    stores go on, each with its own witness."""
    shared = tmp_path / "elsewhere" / "W"
    original = tmp_path / "a" / "live.db"
    original.parent.mkdir()
    gm("db", "init", "--db", original, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", original, "--as", OPERATOR)
    host = ("house", "run", "--tables", "1", "--hands", "1", "--speed", "200")
    gm(*host, "--db", original, "--witness", shared)
    copy = _copy_without_witness(original, tmp_path / "copy")
    before = {p.name: p.read_bytes() for p in witness.files(shared)}
    adjust = ("players", "adjust", "bot-001", "5", "--reason", "fork", "--db", copy)
    uncovered = gm(*adjust, "--as", OPERATOR, expect=2)  # done, but not signed into W
    assert uncovered.stderr.startswith("error: done and logged (it stays)"), uncovered.stderr
    assert f"is the witness of the store at {original.resolve()}" in uncovered.stderr
    refused = gm(*host, "--db", copy, expect=2)
    assert f"{shared} is the witness of the store at {original.resolve()}" in refused.stderr
    assert "gmtool gm witness add DIR" in refused.stderr, refused.stderr
    export = gm("checkpoint", "export", "--db", copy, expect=2)
    assert "is the witness of the store at" in export.stderr, export.stderr
    assert {p.name: p.read_bytes() for p in witness.files(shared)} == before
    gm(*host, "--db", original)  # the original is untouched and goes on
    assert gm("audit", "--db", original, expect=None).returncode == 0
    own = tmp_path / "copy" / "own-witness"
    gm("gm", "witness", "add", own, "--db", copy, "--as", OPERATOR)  # recorded; W refuses it
    gm("gm", "witness", "remove", shared, "--db", copy, "--as", OPERATOR)  # signs into its own
    gm(*host, "--db", copy)
    assert witness.files(own) and gm("audit", "--db", copy, expect=None).returncode == 0


def test_a_store_moved_for_good_takes_its_witness_along(gm, tmp_path: Path) -> None:
    """The claim follows the store: moved to another path (the old one gone), its host
    signs into the witness it records, as before."""
    shared = tmp_path / "elsewhere" / "W"
    db = tmp_path / "a" / "live.db"
    db.parent.mkdir()
    gm("db", "init", "--db", db, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", db, "--as", OPERATOR)
    gm("house", "run", "--tables", "1", "--hands", "1", "--db", db, "--witness", shared)
    moved = _copy_without_witness(db, tmp_path / "b")
    for path in db.parent.iterdir():
        path.unlink()
    gm("checkpoint", "export", "--db", moved)
    assert gm("audit", "--db", moved, expect=None).returncode == 0
