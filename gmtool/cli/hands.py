"""`gmtool hands`: compare hands, play scripted hands (the sandbox)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from gmtool.bounds import MAX_COUNT, MAX_ID
from gmtool.cli.common import (
    DB_OPTION,
    JSON_OPTION,
    LIMIT_HELP,
    SINCE_OPTION,
    UNTIL_OPTION,
    WITNESS_OPTION,
    emit,
    reading_any,
    with_any_store,
)
from gmtool.cli.console import Abort, console

KEY_OPTION = typer.Option(
    None,
    "--key",
    help="The host's checkpoint verifier key (default: <db>.checkpoint.pub beside a SQLite "
    "store; a PostgreSQL store has none beside it: give it here).",
)
ExportFormat = Enum("ExportFormat", {"md": "md", "json": "json"}, type=str)

app = typer.Typer(
    help="Compare and play hands; list, show, export and replay recorded hands.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command()
def compare(
    hands: list[str] = typer.Argument(
        ..., metavar="HAND...", help='Cards separated by spaces: "AS KS QS JS TS".'
    ),
    profile: Path = typer.Option(..., "--profile", help="The profile whose ranking applies."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Rank hands under a profile and explain the result in words a player understands."""
    from gmtool.engine.compare import compare_hands
    from gmtool.rules.compile import compile_file

    if len(hands) < 2:
        raise Abort("give at least two hands to compare")
    emit(compare_hands(compile_file(profile), hands), as_json, _render_comparison)


def _render_comparison(result: dict) -> None:
    for index, hand in enumerate(result["hands"]):
        mark = "winner" if index == result["winner"] else f"hand {index + 1}"
        console.line(f"{mark:>7}: {hand['cards']}  {hand['category']}")
        console.line(f"         {hand['explanation']}")


@app.command()
def play(
    script: Path = typer.Argument(..., help="A scenario file (rules/scenarios/README.md)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Play a scripted hand without a database and check its [expect] table."""
    from gmtool.cli.render_hands import render_outcome
    from gmtool.sandbox.expect import check
    from gmtool.sandbox.run import play as play_scenario
    from gmtool.sandbox.scenario import load_scenario

    outcome = play_scenario(load_scenario(script))
    failures = check(outcome)
    if as_json:
        console.json({**outcome.as_json(), "failures": failures})
    else:
        render_outcome(outcome, console)
        console.lines(f"FAILED {failure}" for failure in failures)
        if not failures and outcome.scenario.expect:
            console.line("expectations met")
    if failures:
        raise typer.Exit(1)


@app.command("list")
def list_(
    player: str | None = typer.Option(None, "--player", help="Hands this player sat in."),
    table: str | None = typer.Option(None, "--table", help="Hands of this table."),
    since: str | None = SINCE_OPTION,
    until: str | None = UNTIL_OPTION,
    limit: int = typer.Option(50, "--limit", min=0, max=MAX_COUNT, help=LIMIT_HELP),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Recorded hands, newest first."""
    from gmtool.store.queries import list_hands
    from gmtool.store.scan import count_hands

    with reading_any(db) as store:
        rows = list_hands(store, since, until, table, player, limit)
        total = count_hands(store, since, until, table, player)
    emit(rows, as_json, lambda rows: _render_hands(rows, total))


def _render_hands(rows: list[dict], total: int) -> None:
    shown = (
        f"{len(rows)} hand(s)"
        if len(rows) == total
        else f"showing the newest {len(rows)} of {total} hands "
        "(use --limit N, or --limit 0 for all)"
    )
    console.table(
        shown,
        ["hand", "table", "#", "tier", "players", "started", "outcome", "winners"],
        [
            (
                r["id"],
                r["table_id"],
                r["number"],
                r["tier"],
                ", ".join(s["player"] for s in r["seats"]),
                r["started_at"][:19],
                r["outcome"],
                ", ".join(r["winners"]),
            )
            for r in rows
        ],
        right_align=(0, 2),
        keep=("hand", "table", "outcome"),
        drop=("tier", "#", "players", "winners", "started"),
    )


@app.command()
def show(
    hand: int = typer.Argument(..., min=1, max=MAX_ID, help="Hand id (see `hands list`)."),
    key: Path | None = KEY_OPTION,
    witness: str | None = WITNESS_OPTION,
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """A recorded hand: timeline, deck commitment, revealed seed and whether it verifies,
    and its whole evidence checked as the audit checks it (exit 1 if it does not verify)."""
    from gmtool.cli.render_hands import evidence_lines, render_report
    from gmtool.ops.hands import show as show_hand

    report = with_any_store(db, show_hand, hand, key, witness)
    emit(
        report,
        as_json,
        lambda report: console.lines([*render_report(report), "", *evidence_lines(report)]),
    )
    if not report["evidence"]["verified"]:
        raise typer.Exit(1)


@app.command()
def export(
    hand: int = typer.Argument(..., min=1, max=MAX_ID, help="Hand id."),
    output_format: ExportFormat = typer.Option("md", "--format", help="md or json."),
    key: Path | None = KEY_OPTION,
    witness: str | None = WITNESS_OPTION,
    db: str | None = DB_OPTION,
) -> None:
    """A dispute report for a support ticket (markdown or JSON). The JSON of an ended hand
    carries its proof: `gmtool verify REPORT.json --key HOST.pub` checks it offline. A hand
    whose evidence does not verify is not exported (exit 1)."""
    from gmtool.cli.render_hands import markdown_report

    as_json = output_format.value == "json"
    with reading_any(db) as store:
        report = _report_with_proof(store, hand, key, witness, as_json)
    emit(report, as_json, lambda report: console.raw(markdown_report(report)))


def _report_with_proof(
    store, hand: int, key: Path | None, witness: str | None, proven: bool
) -> dict:
    from gmtool.audit.dispute import hand_report
    from gmtool.ops.hands import exportable

    if getattr(store, "is_postgres", False):  # its hosts' notary signs, never a console
        exportable(store, hand, key, witness)
        report = hand_report(store, hand, with_replay=True)
        if proven and report["outcome"] != "running":
            _given_proof(store, report, key, witness)
        return report
    from gmtool.audit.proof import NotCovered, hand_proof
    from gmtool.evidence import witness as witness_files
    from gmtool.house.notary import Notary

    notary = Notary(store, witness, notify=console.warning)  # refuses a --witness not recorded
    exportable(store, hand, key, witness)
    report = hand_report(store, hand, with_replay=True)
    if not proven or report["outcome"] == "running":
        return report
    if not witness_files.key_path(store.path).exists():
        console.warning(
            "this store's host signs no checkpoints (no checkpoint key beside "
            "it): the report carries no proof"
        )
        return report
    for attempt in range(2):
        latest = notary.latest(host_only=True)
        if latest is not None:
            path, checkpoint = latest
            try:
                report["proof"] = hand_proof(
                    store,
                    hand,
                    path.read_text(encoding="utf-8"),
                    checkpoint,
                    notary.signer.verifier,
                )
                return report
            except NotCovered:
                pass
        if attempt == 0:
            notary.sign()  # the hand is newer than the newest checkpoint: sign one now
    console.warning("no checkpoint covers this hand: the report carries no proof")
    return report


def _given_proof(store, report: dict, key: Path | None, witness: str | None) -> None:
    """The proof of a PostgreSQL store's hand: in the newest checkpoint its host signed
    in the witness, opened with `--key`. Nothing signs one here (the host's notary does):
    a hand newer than the newest checkpoint is exported without a proof, saying so."""
    from gmtool.audit.proof import NotCovered, hand_proof
    from gmtool.ops.checkpoints import host_verifier
    from gmtool.ops.hands import host_signed_checkpoint

    verifier = host_verifier(store, key)
    if verifier is None:
        console.warning(
            "a PostgreSQL store has no checkpoint key beside it: pass --key with the host's "
            "verifier key (and --witness with the folder of its checkpoints) for the report "
            "to carry its proof; this one carries none"
        )
        return
    latest = host_signed_checkpoint(store, key, witness)
    if latest is None:
        console.warning(
            "no checkpoint its host signed is in the witness (pass --witness with the "
            "folder of its checkpoints): the report carries no proof"
        )
        return
    path, checkpoint = latest
    try:
        report["proof"] = hand_proof(
            store, report["hand"], path.read_text(encoding="utf-8"), checkpoint, verifier
        )
    except NotCovered:
        console.warning(
            f"no checkpoint in the witness covers this hand yet (the newest, {path.name}, "
            "is older; its host signs the next one): the report carries no proof"
        )


@app.command()
def replay(
    hand: int = typer.Argument(..., min=1, max=MAX_ID, help="Hand id."),
    key: Path | None = KEY_OPTION,
    witness: str | None = WITNESS_OPTION,
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Re-run the recorded actions through the engine under the hand's recorded config,
    then check the rest of its evidence as the audit does (exit 1 if anything differs)."""
    from gmtool.ops.hands import replay as replay_hand

    result = with_any_store(db, replay_hand, hand, key, witness)
    emit(result, as_json, _render_replay)
    if not result["ok"]:
        raise typer.Exit(1)


def _render_replay(result: dict) -> None:
    from gmtool.cli.render_hands import evidence_lines

    if result["replay_ok"]:
        console.line(
            f"hand {result['hand']}: replay matches, {result['events_checked']} "
            "events and the settlement identical"
        )
    else:
        console.line(f"hand {result['hand']}: MISMATCH")
        console.lines(f"  {p['kind']}: {p['detail']}" for p in result["problems"][:1])
    console.lines(evidence_lines(result))
