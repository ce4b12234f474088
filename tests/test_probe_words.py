"""Words a third outside probe of issue 23 found wanting: each mistake is named as what it
is, in plain words, with exit 2 and nothing written."""

from __future__ import annotations

from pathlib import Path

from conftest import OPERATOR, RULES, Gmtool

QQ = RULES / "qq-showhand.toml"


def _error(run) -> str:
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


def test_plan_out_dash_is_refused_before_anything(gm: Gmtool, deployed_db: Path) -> None:
    run = gm("deploy", QQ, "--plan-out", "-", "--db", deployed_db, "--as", OPERATOR, expect=2)
    assert "--plan-out -: a plan is a file" in _error(run)
    assert not Path("-").exists()


def test_a_blank_output_or_gm_name_is_named_blank(gm: Gmtool, tmp_path: Path) -> None:
    run = gm("rules", "compile", QQ, "-o", "", expect=2)
    assert "-o is blank or names this folder" in _error(run)
    run = gm("gm", "keys", "new", "", expect=2)
    assert "the GM name given is blank" in _error(run)


def test_a_name_no_key_can_have_is_not_told_to_make_one(gm: Gmtool, deployed_db: Path) -> None:
    run = gm(
        "players", "adjust", "bot-001", "5", "--reason", "r", "--db", deployed_db,
        "--as", "al\u200bice", expect=2,
    )  # fmt: skip
    message = _error(run)
    assert "cannot have a key" in message and "keys new" not in message, message


def test_verifier_and_witness_keys_that_are_not_named_so(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    gm("checkpoint", "export", "--db", deployed_db)
    private = deployed_db.with_name(deployed_db.name + ".checkpoint.key")
    report = tmp_path / "r.json"
    report.write_text('{"hand": 1}\n')
    run = gm("verify", report, "--key", private, expect=2)
    assert "is a signing (private) key, not a verifier key" in _error(run)
    missing = tmp_path / "missing.pub"
    run = gm(
        "gm", "witness", "add", "http://127.0.0.1:9/", "--key", missing,
        "--db", deployed_db, "--as", OPERATOR, expect=2,
    )  # fmt: skip
    assert f"--key {missing}: no such file" in _error(run)


def test_a_store_named_through_a_symlink_keeps_its_files_beside_the_real_one(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """Third outside re-probe of issue 23: a host and a console reaching the store through a
    symbolic link made a second seed key and checkpoint key beside the link, and the store's
    own audit then called its evidence forged, for good."""
    gm("house", "run", "--db", deployed_db, "--tables", "1", "--hands", "1", "--speed", "50")
    link = tmp_path / "elsewhere" / "link.db"
    link.parent.mkdir()
    link.symlink_to(deployed_db)
    gm("players", "adjust", "bot-001", "1", "--reason", "x", "--db", link, "--as", OPERATOR)
    gm("house", "run", "--db", link, "--tables", "1", "--hands", "1", "--speed", "50")
    assert sorted(p.name for p in link.parent.iterdir()) == ["link.db"]
    gm("audit", "--db", deployed_db)
    gm("audit", "--db", link)


def test_a_hand_of_an_older_copy_is_said_to_be_of_an_older_copy(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """Third outside re-probe of issue 23: on a copy left behind by its original (which
    signed on into the witness both record), `hands show` and `hands export` called every
    intact record "rewritten"; the audit says `checkpoint_rollback`, and so do they now."""
    original = tmp_path / "a" / deployed_db.name
    original.parent.mkdir()
    deployed_db.rename(original)
    deployed_db = original
    shared = tmp_path / "elsewhere" / "W"  # where both the original and the copy find it
    host = ("house", "run", "--tables", "1", "--hands", "1", "--speed", "50")
    gm(*host, "--db", deployed_db, "--witness", shared)
    copy = tmp_path / "copy" / deployed_db.name
    copy.parent.mkdir()
    for suffix in ("", ".seed.key", ".checkpoint.key", ".checkpoint.pub"):
        source = deployed_db.with_name(deployed_db.name + suffix)
        if source.exists():
            copy.with_name(copy.name + suffix).write_bytes(source.read_bytes())
    gm(*host, "--db", deployed_db)  # the original goes on
    shown = gm.json("hands", "show", "1", "--db", copy, "--json", expect=1)
    kinds = {p["kind"] for p in shown["evidence"]["problems"]}
    assert kinds == {"checkpoint_rollback"}, shown["evidence"]["problems"]
    audit = gm.json("audit", "--db", copy, "--json", expect=1)
    assert "checkpoint_rollback" in {p["kind"] for p in audit["problems"]}


def test_a_plan_is_never_written_over_a_link(gm: Gmtool, deployed_db: Path, tmp_path: Path) -> None:
    """Last re-probe of issue 23: `--plan-out /dev/stdout` run as root replaced the
    machine's /dev/stdout link with a file. A link (to a file, to a device, to nothing) or a
    blank name is refused and left as it was; `rules compile -o LINK` writes through it."""
    target = tmp_path / "target.txt"
    target.write_text("kept\n")
    for name, points_to in (("to-file", target), ("dangling", tmp_path / "nothing")):
        link = tmp_path / name
        link.symlink_to(points_to)
        run = gm("deploy", QQ, "--plan-out", link, "--db", deployed_db, "--as", OPERATOR, expect=2)
        assert "is a symbolic link: name the file itself" in _error(run)
        assert link.is_symlink() and target.read_text() == "kept\n"
    run = gm("deploy", QQ, "--plan-out", " ", "--db", deployed_db, "--as", OPERATOR, expect=2)
    assert "--plan-out is blank" in _error(run)
    compiled = tmp_path / "compiled-link"
    compiled.symlink_to(target)
    gm("rules", "compile", QQ, "-o", compiled)
    assert compiled.is_symlink() and target.read_text().startswith("{")


def test_a_private_key_given_as_a_witness_key_is_named_never_echoed(
    gm: Gmtool, deployed_db: Path
) -> None:
    gm("house", "run", "--db", deployed_db, "--tables", "1", "--hands", "1", "--speed", "50")
    for suffix in (".checkpoint.key", ".seed.key"):
        key = deployed_db.with_name(deployed_db.name + suffix)
        run = gm(
            "gm", "witness", "add", "http://127.0.0.1:9/", "--key", key,
            "--db", deployed_db, "--as", OPERATOR, expect=2,
        )  # fmt: skip
        message = _error(run)
        assert "a signing (private) key" in message, message
        assert "BEGIN" not in message and "PRIVATE+KEY" not in message, message
