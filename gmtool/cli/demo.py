"""`gmtool demo`: the newcomer's first command: a working game operation in under a minute."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.cli.common import MAX_SPEED, number_option
from gmtool.cli.console import console

NEXT_STEPS = [
    "gmtool hands list --db {db}",
    "gmtool hands show {hand} --db {db}",
    "gmtool hands replay {hand} --db {db}",
    "gmtool audit --db {db}",
    "gmtool hands export {hand} --format json --db {db} > hand.json && gmtool verify "
    "hand.json --key {db}.checkpoint.pub",
    "gmtool house run --db {db} --tables 8 --speed 20 --chaos 0.05   "
    "(and in another terminal: gmtool tables watch --db {db})",
    "gmtool rules show rules/qq-showhand.toml",
    "gmtool rules diff rules/qq-showhand.toml rules/video-showhand.toml",
]


def demo(
    db: str | None = typer.Option(
        None,
        "--db",
        help="Demo database file (default ./gmtool-demo.db; replaced if it exists).",
    ),
    seconds: float = number_option(
        20.0, "--duration", "--seconds", min=1.0, max=3600.0, help="How long tables play (seconds)."
    ),
    speed: float = number_option(
        60.0,
        "--speed",
        min=1.0,
        max=MAX_SPEED,
        help="Time scale of the profiles' limits (60 = a 15 s action limit lasts 0.25 s).",
    ),
    chaos: float = number_option(
        0.05, "--chaos", min=0.0, max=1.0, help="Chance per turn of a disconnect, stall or escape."
    ),
    seed: str = typer.Option("demo", "--seed", help="Seed of bots and decks (demo only)."),
) -> None:
    """Create a demo store, deploy every shipped profile, host tables of every system, report."""
    import asyncio

    from gmtool.house import seeds
    from gmtool.house.host import HostOptions, prepare_host
    from gmtool.house.lock import HostLock
    from gmtool.ops import demo as demo_setup
    from gmtool.store.db import resolve_path

    path = resolve_path(db) if db else Path(demo_setup.DEMO_DB)  # a file: not PostgreSQL yet
    demo_setup.rules_dir()  # no shipped profiles here: say so before a store is made
    with HostLock(path), demo_setup.fresh_store(path) as store:
        seeds.keep_demo_key(path, seed)  # a later `house run` on it deals from the same key
        operator = demo_setup.demo_operator(store)
        deployed = demo_setup.deploy_shipped(store, operator)
        console.line(
            f"{path}: deployed {len(deployed)} profiles: "
            + ", ".join(d["profile"] for d in deployed)
        )
        plan = demo_setup.demo_table_plan(store)
        host = prepare_host(
            store,
            HostOptions(
                tables=len(plan), speed=speed, duration=seconds, chaos=chaos, seed=seed, grace=5.0
            ),
            plan=plan,
        )
        console.line(
            f"hosting {len(plan)} tables with bots for {seconds:g} s "
            f"(time x{speed:g}, chaos {chaos:g}) ..."
        )
        with console.progress(f"playing {len(plan)} tables", total=seconds) as advance:
            report = asyncio.run(host.run(progress=lambda h: advance(h.report.hands)))
        _summary(store, path, report)


def _summary(store, path: Path, report) -> None:
    from gmtool.cli.render_hands import timeline
    from gmtool.engine.events import Event
    from gmtool.evidence import witness
    from gmtool.house import seeds
    from gmtool.ops import demo as demo_setup
    from gmtool.ops.audit import audit as run_audit
    from gmtool.store.queries import hand_events, showcase_hand, summary

    counts = summary(store)
    console.line("")
    console.line(
        f"tables: {len(report.tables)}   hands: {counts['settled']} settled, "
        f"{counts['voided']} voided   coins in play: {counts['coins']:,} held by "
        f"{counts['players']} players"
    )
    hand_id = showcase_hand(store)
    if hand_id is not None:
        events = [
            Event.from_json({k: v for k, v in e.items() if k != "seq"})
            for e in hand_events(store, hand_id)
        ]
        console.line(f"\none hand (#{hand_id}):")
        console.lines("  " + line for line in timeline(events))
    audit = run_audit(store)
    problems = audit.problems
    verdict = (
        "ok"
        if not problems
        else f"{len(problems)} problem(s), first: {problems[0]['kind']}: {problems[0]['detail']}"
    )
    console.line(
        f"\naudit of {audit.hands_checked} hands (chains, deck commitments, replays, "
        f"zero-sum settlements, ledgers, seeds, GM log, evidence log): {verdict}"
    )
    if audit.checkpoint:
        console.line(
            f"evidence: {audit.checkpoint['records']} records, signed with "
            f"{witness.key_path(path)} (verifier key {witness.public_key_path(path)})"
            f" into {witness.witness_dir(path)}/"
        )
    console.line(
        f"hand seeds: HMAC of {seeds.key_path(path)}, the key --seed stands for, published "
        "in the evidence log (a demo's key is no secret; a real store's host signs each seed "
        "with a seed key of its own, checked with no secret)"
    )
    keys = demo_setup.gm_key_dir(path)
    console.line(
        f"GM: 'demo', the store's operator, signs with {keys}/demo.key; act as it "
        f"with GMTOOL_KEYS={keys} gmtool ... --as demo"
    )
    console.line("\nnext, try:")
    console.lines("  " + step.format(db=path, hand=hand_id or 1) for step in NEXT_STEPS)
