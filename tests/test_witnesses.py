"""The store knows its witnesses (issue 23, item 4): where its signed checkpoints go is
recorded as evidence, changed only by an operator's signed, logged GM action, and every
command that signs or reads checkpoints uses it. A `--witness` the store does not record
is refused (audit: checked instead, with a warning); no command makes a witness folder
silently; a store that records none behaves as before until one is recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, SUPPORT, copy_db
from helpers import public_key, query, rewrite_log
from witness_server import obeying_file_modes

from gmtool.canonical import canonical_json
from gmtool.evidence import witness
from gmtool.evidence.note import Verifier, open_checkpoint
from gmtool.store.db import connect

ENGINE_3 = Path(__file__).parent / "data" / "stores" / "engine-3.sqlite"


def _new_store(gm, folder: Path) -> Path:
    """A store with its first operator and one profile deployed (no host yet)."""
    folder.mkdir(parents=True)
    db = folder / "live.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", db, "--as", OPERATOR)
    return db


def _audit(gm, db: Path, *args) -> tuple[int, dict, str]:
    run = gm("audit", "--db", db, "--json", *args, expect=None)
    return run.returncode, json.loads(run.stdout), run.stderr


def _log_size(db: Path) -> int:
    return query(db, "SELECT COUNT(*) FROM log")[0][0]


def _signed_size(path: Path, db: Path) -> int:
    verifier = Verifier.parse(witness.public_key_path(db).read_text())
    return open_checkpoint(path.read_text(), [verifier]).size


@pytest.fixture
def witnessed(tmp_path: Path, gm, virtual_host) -> tuple[Path, Path]:
    """A store whose host ran with `--witness W`, W on other storage than the store (its
    own folder here): the host recorded W. Stopped."""
    db = _new_store(gm, tmp_path / "store")
    folder = tmp_path / "elsewhere" / "W"
    host = virtual_host(db, tables=2, seed="witness", witness=str(folder))
    host.advance(60)
    host.stop()
    host.close()
    return db, folder


def test_export_and_audit_use_the_witness_the_host_recorded_and_make_no_second_one(
    tmp_path: Path, gm, virtual_host
) -> None:
    """The issue's case: a host run with --witness W; `hands export` of a hand newer than
    W's newest checkpoint signs one into W (not into a new `<db>.witness/`), and the audit
    checks W and says so."""
    db = _new_store(gm, tmp_path / "store")
    folder = tmp_path / "elsewhere" / "W"
    host = virtual_host(db, tables=2, seed="witness", witness=str(folder), checkpoint_every=3600)
    assert [m for m in host.messages if "created the witness folder" in m] == [
        f"created the witness folder {folder} for this store's signed checkpoints (keep it, "
        "or a copy, on other storage than the store)"
    ]
    assert any(m.startswith(f"recorded {folder} as this store's witness") for m in host.messages)
    hand = host.run_until(
        lambda: query(db, "SELECT MAX(id) FROM hands WHERE outcome = 'settled'")[0][0],
        what="a settled hand",
    )
    started = witness.files(folder)
    assert [_signed_size(p, db) for p in started] == [_signed_size(started[0], db)]  # at start

    report = gm.json("hands", "export", hand, "--format", "json", "--db", db)
    newest = witness.files(folder)[-1]
    assert len(witness.files(folder)) == 2 and report["proof"]["checkpoint"] == newest.read_text()
    host.stop()
    host.close()
    code, audit, _ = _audit(gm, db)
    assert code == 0 and audit["problems"] == []
    newest = witness.files(folder)[-1]
    assert audit["checkpoint"]["file"] == newest.name
    assert audit["checkpoint"]["witness"] == str(folder)
    assert f"({newest.name} in {folder})" in gm("audit", "--db", db).stdout
    assert not Path(f"{db}.witness").exists()
    listed = gm.json("gm", "witness", "list", "--db", db, "--json")
    assert listed["witnesses"] == [
        {"type": "folder", "location": str(folder), "folder": str(folder)}
    ]
    assert [(c["change"], c["gm_action_id"], c["by"]) for c in listed["changes"]] == [
        ("add", None, None)
    ]


def test_a_witness_the_store_does_not_record_is_refused_and_audit_warns(
    witnessed: tuple[Path, Path], gm, tmp_path: Path
) -> None:
    db, folder = witnessed
    other = tmp_path / "other"
    size = _log_size(db)
    for command in (
        ("house", "run", "--hands", "1", "--speed", "1000"),
        ("hands", "export", "1", "--format", "json"),
        ("checkpoint", "export"),
    ):
        run = gm(*command, "--db", db, "--witness", other, expect=2)
        assert f"--witness {other} is not this store's witness: it records {folder}" in run.stderr
        assert "gmtool gm witness add DIR" in run.stderr and run.stdout == "", command
    assert not other.exists() and not Path(f"{db}.witness").exists()
    assert _log_size(db) == size  # nothing was written
    signed = gm("checkpoint", "export", "--db", db, "--witness", folder)  # the recorded one
    assert str(folder) in signed.stderr

    copy = tmp_path / "copy-of-W"
    shutil.copytree(folder, copy)  # a regulator's copy, say
    code, audit, warning = _audit(gm, db, "--witness", copy)
    assert code == 0 and audit["checkpoint"]["witness"] == str(copy)
    assert f"warning: --witness {copy} is not this store's witness (it records {folder})" in (
        warning
    )


def test_gm_witness_changes_are_signed_logged_and_audited(
    witnessed: tuple[Path, Path], gm, tmp_path: Path, virtual_host
) -> None:
    db, folder = witnessed
    far = tmp_path / "far" / "W2"
    far.parent.mkdir()  # (a witness folder is made only inside an existing one)
    added = gm("gm", "witness", "add", far, "--db", db, "--as", OPERATOR)
    assert added.stdout.startswith(f"created the folder {far}\n{far} is now a witness")
    (signed,) = witness.files(far)  # a checkpoint at once, covering the change
    assert _signed_size(signed, db) == _log_size(db)
    assert (folder / signed.name).read_text() == signed.read_text()
    action = query(db, "SELECT * FROM gm_actions ORDER BY id DESC LIMIT 1")[0]
    assert (action["actor"], action["action"], action["target"]) == (
        OPERATOR,
        "witness_add",
        str(far),
    )
    assert action["request"] and json.loads(action["outcome"])["ok"]

    key = public_key(SUPPORT)
    gm(
        "gm",
        "users",
        "add",
        SUPPORT,
        "--role",
        "support",
        "--key",
        key,
        "--db",
        db,
        "--as",
        OPERATOR,
    )
    refused = gm("gm", "witness", "remove", folder, "--db", db, "--as", SUPPORT, expect=1)
    assert "only operators may witness remove" in refused.stderr
    gm("gm", "witness", "remove", folder, "--db", db, "--as", OPERATOR)
    last = gm("gm", "witness", "remove", far, "--db", db, "--as", OPERATOR, expect=1)
    assert "the store's only witness folder: add the new one first" in last.stderr
    logged = [
        (r["actor"], r["action"], json.loads(r["outcome"]).get("ok"))
        for r in query(db, "SELECT * FROM gm_actions WHERE action LIKE 'witness%' ORDER BY id")
    ]
    assert logged == [
        (OPERATOR, "witness_add", True),
        (SUPPORT, "witness_remove", False),
        (OPERATOR, "witness_remove", True),
        (OPERATOR, "witness_remove", False),
    ]
    listed = gm.json("gm", "witness", "list", "--db", db, "--json")
    assert [w["folder"] for w in listed["witnesses"]] == [str(far)]
    assert [(c["change"], c["by"]) for c in listed["changes"]] == [
        ("add", None),
        ("add", OPERATOR),
        ("remove", OPERATOR),
    ]
    code, audit, _ = _audit(gm, db)
    assert code == 0 and audit["problems"] == [] and audit["checkpoint"]["witness"] == str(far)

    before = len(witness.files(folder))
    host = virtual_host(db, tables=1, seed="witness")  # the next host signs into W2 alone
    host.stop()
    host.close()
    assert len(witness.files(folder)) == before and len(witness.files(far)) > 1


def _copy(db: Path, folder: Path) -> Path:
    """A copy of the store with its keys (its witness, elsewhere, stays where it is)."""
    copy = copy_db(db, folder, db.name)
    shutil.copyfile(witness.public_key_path(db), witness.public_key_path(copy))
    return copy


def _point_at(location: str, in_the_log: bool):
    """The recorded witness's location changed in its row (and in its log record)."""

    def change(conn) -> None:
        conn.execute("UPDATE witnesses SET location = ? WHERE id = 1", (location,))
        if in_the_log:
            (idx, body) = conn.execute(
                "SELECT idx, body FROM log WHERE kind = 'witness' AND nkey = 1"
            ).fetchone()
            record = {**json.loads(body), "location": location}
            conn.execute("UPDATE log SET body = ? WHERE idx = ?", (canonical_json(record), idx))

    return change


def test_an_attacker_changing_the_recorded_witness_is_found_by_the_audit(
    witnessed: tuple[Path, Path], gm, tmp_path: Path
) -> None:
    db, folder = witnessed
    theirs = tmp_path / "attacker"
    theirs.mkdir()

    edited = _copy(db, tmp_path / "edited")  # the row alone
    rewrite_log(edited, _point_at(str(theirs), in_the_log=False))
    code, audit, _ = _audit(gm, edited)
    assert code == 1 and [p["kind"] for p in audit["problems"]] == [
        "differs_from_log",
        "witness_missing",
    ], audit
    assert (
        "witness change 1: location differs from the evidence log"
        in (audit["problems"][0]["detail"])
    )

    rewritten = _copy(db, tmp_path / "rewritten")  # row and log, every hash recomputed
    rewrite_log(rewritten, _point_at(str(theirs), in_the_log=True))
    code, audit, _ = _audit(gm, rewritten)
    assert code == 1 and [p["kind"] for p in audit["problems"]] == ["witness_missing"], audit
    assert str(theirs) in audit["problems"][0]["detail"]
    code, audit, _ = _audit(gm, rewritten, "--witness", folder)  # where the auditor knows it is
    assert code == 1 and [p["kind"] for p in audit["problems"]] == ["checkpoint_rewrite"], audit

    from gmtool.store import witnesses

    inserted = _copy(db, tmp_path / "inserted")  # changes appended as gmtool's own code would
    with connect(inserted) as store, store.write():
        witnesses.record(store, "remove", witness.Witness("folder", str(folder)))
        witnesses.record(store, "add", witness.folder_witness(inserted, theirs))
    code, audit, _ = _audit(gm, inserted, "--witness", folder)
    found = [(p["kind"], p["detail"]) for p in audit["problems"]]
    assert code == 1 and found == [
        (
            "witness",
            f"witness change 2 (remove folder {folder}) was made by no GM action (inserted)",
        ),
        ("witness", f"witness change 3 (add folder {theirs}) was made by no GM action (inserted)"),
    ], found


def test_a_store_that_records_no_witness_behaves_as_before_until_one_is_recorded(
    tmp_path: Path, gm, virtual_host
) -> None:
    """A store from before (the engine-3 store) records none: its audit reads
    `<db>.witness/`, as it always did. Until a store records one, the checkpoint commands
    sign into `--witness`, else `<db>.witness/`, making the folder of its first checkpoint
    (announced) but no other: a checkpoint key beside the store says its checkpoints were
    signed somewhere. Its next host start records the folder it signs into."""
    old = tmp_path / "old" / ENGINE_3.name
    old.parent.mkdir()
    for suffix in ("", ".key", ".checkpoint.pub", ".witness"):
        source = ENGINE_3.with_name(ENGINE_3.name + suffix)
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, f"{old}{suffix}")
    connect(old).close()  # the schema brought up to date, as `db init` does
    listed = gm.json("gm", "witness", "list", "--db", old, "--json")
    assert listed["witnesses"] == [] and listed["unrecorded_default"] == f"{old}.witness"
    code, audit, _ = _audit(gm, old)
    assert code == 0 and audit["problems"] == []
    assert audit["checkpoint"]["witness"] == f"{old}.witness"

    db = _new_store(gm, tmp_path / "store")
    kept = tmp_path / "kept"
    first = gm("checkpoint", "export", "--db", db, "--witness", kept)
    assert f"created the witness folder {kept}" in first.stderr
    again = gm("checkpoint", "export", "--db", db, expect=2)
    assert f"but {db}.witness does not exist: they are in another folder" in again.stderr
    assert not Path(f"{db}.witness").exists()
    assert gm.json("gm", "witness", "list", "--db", db, "--json")["witnesses"] == []
    host = virtual_host(db, tables=1, seed="witness", witness=str(kept))
    host.stop()
    host.close()
    assert not [m for m in host.messages if "created the witness folder" in m]
    listed = gm.json("gm", "witness", "list", "--db", db, "--json")
    assert [w["folder"] for w in listed["witnesses"]] == [str(kept)]
    code, audit, _ = _audit(gm, db)
    assert code == 0 and audit["problems"] == [] and audit["checkpoint"]["witness"] == str(kept)


def test_a_host_will_not_start_without_its_recorded_witness(
    witnessed: tuple[Path, Path], gm, virtual_host
) -> None:
    """With the checkpoint key beside the store, a missing witness is never made again. A
    store without its checkpoint key (a copy that came without it and its witness) is
    hosted as before witnesses were recorded: a new key, its witness folder made again,
    and the host says so."""
    db, folder = witnessed
    folder.rename(folder.with_name("unmounted"))
    size = _log_size(db)
    run = gm("house", "run", "--db", db, "--hands", "1", "--speed", "1000", expect=2)
    assert f"{folder}, this store's witness, does not exist (not mounted? deleted?)" in run.stderr
    assert not folder.exists() and not Path(f"{db}.witness").exists()
    assert _log_size(db) == size

    witness.key_path(db).unlink()
    host = virtual_host(db, tables=1, seed="witness")
    host.stop()
    host.close()
    assert [m for m in host.messages if "created the witness folder" in m] == [
        f"created the witness folder {folder}, this store's witness, again (it was missing, "
        "and so was the checkpoint key: a new key signs from now on; restore both instead "
        "if you have them)"
    ]


# -- issue 23 leftovers: `gm witness add` makes no folder it cannot record ------------------


def test_gm_witness_add_makes_no_folder_on_a_read_only_store_nor_missing_parents(
    tmp_path: Path, gm
) -> None:
    import subprocess

    from helpers import clean_env

    db = _new_store(gm, tmp_path / "store")
    nowhere = tmp_path / "nowhere" / "W"
    run = gm("gm", "witness", "add", nowhere, "--db", db, "--as", OPERATOR, expect=2)
    assert f"its folder {nowhere.parent} does not exist" in run.stderr
    assert not nowhere.parent.exists()

    folder = tmp_path / "W"
    parts = [db.parent, *db.parent.iterdir()]
    try:
        for part in parts:
            part.chmod(0o555 if part.is_dir() else 0o444)
        run = subprocess.run(
            [*obeying_file_modes(), "gm", "witness", "add", str(folder)]
            + ["--db", str(db), "--as", OPERATOR],
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        for part in parts:
            part.chmod(0o755 if part.is_dir() else 0o644)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "may not write the store" in run.stderr, run.stderr
    assert not folder.exists()
    listed = gm.json("gm", "witness", "list", "--db", db, "--json")
    assert listed["witnesses"] == []
