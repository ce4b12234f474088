"""RULES G3: hole cards of a running hand are never shown in the console, in any format.

The real host plays in this process on virtual time (tests/hosting.py) and is stepped to
chosen moments of play: first when running hands of both games have their hole cards
dealt, then when one of those stud5 hands has dealt a later street. At each moment the
host is still, and every console view of the running hands is scanned for the face-down
cards the store recorded for them (read straight from SQLite): `tables list` (JSON and
text), `tables show` (JSON and text), `tables watch --count 1`, `hands show` (JSON and
text). In three-card every card is face down, so no card of a running hand may appear at
all. Once the hand has ended, `hands show` shows them and the seed verifies.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import query as _query
from hosting import VirtualHost

from gmtool.house.host import HostOptions

# Seven tables (two of them three-card) with chaos; speed 1 on virtual time.
HOST = HostOptions(tables=7, speed=1.0, chaos=0.1, seed="g3", grace=1.0)
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9TJQKA])[SHCD](?![0-9A-Za-z])")
COMMANDS = (
    "tables list --json",
    "tables list",
    "tables watch",
    "tables show --json",
    "tables show",
    "hands show --json",
    "hands show",
)
WANTED_PER_GAME = 2  # running hands of each game whose every view was scanned (7 tables:
# two of them three-card, dealt at once)
WITHIN_S = 3600  # virtual seconds of play in which each moment must come


@dataclass(frozen=True)
class Running:
    hand: int
    table: str
    number: int
    game: str
    hole: frozenset[str]  # face-down cards
    face_up: frozenset[str]

    @property
    def secret(self) -> frozenset[str]:
        return self.hole if self.game == "stud5" else self.hole | self.face_up


def running_hands(db: Path) -> dict[int, Running]:
    """Every running hand with the cards dealt so far, from the events table."""
    out = {}
    for row in _query(
        db,
        "SELECT h.id, h.table_id, h.number, t.game FROM hands h JOIN tables t "
        "ON t.id = h.table_id WHERE h.outcome = 'running'",
    ):
        hole, up = set(), set()
        for (payload,) in _query(
            db, "SELECT payload FROM events WHERE hand_id = ? AND type = 'deal'", (row["id"],)
        ):
            for card in json.loads(payload)["cards"]:
                (hole if card["face"] == "down" else up).add(card["card"])
        if hole:
            out[row["id"]] = Running(
                row["id"],
                row["table_id"],
                row["number"],
                row["game"],
                frozenset(hole),
                frozenset(up),
            )
    return out


def still_running(db: Path, hand_ids) -> set[int]:
    marks = ",".join("?" * len(hand_ids))
    return {
        r[0]
        for r in _query(
            db,
            f"SELECT id FROM hands WHERE outcome = 'running' AND id IN ({marks})",
            tuple(hand_ids),
        )
    }


def _leaks(text: str, hand: Running) -> set[str]:
    return set(CARD.findall(text)) & hand.secret


@pytest.fixture(scope="module")
def live(tmp_path_factory, gm):
    """A store with every system deployed and the real host on it, on virtual time: it
    plays only when the test steps it, so the console reads it at rest."""
    db = tmp_path_factory.mktemp("g3") / "g3.db"
    gm.deploy_all(db)
    host = VirtualHost(db, HOST)
    try:
        yield db, host
    finally:
        host.close()


def _views(gm, db: Path, hands: list[Running]) -> dict[tuple[str, int | None], str]:
    """Every console view, run concurrently: (command, hand or None for all) -> stdout."""
    jobs = {
        ("tables list --json", None): ["tables", "list", "--json"],
        ("tables list", None): ["tables", "list"],
        ("tables watch", None): ["tables", "watch", "--count", "1"],
    }
    for hand in hands:
        jobs[("tables show --json", hand.hand)] = ["tables", "show", hand.table, "--json"]
        jobs[("tables show", hand.hand)] = ["tables", "show", hand.table]
        jobs[("hands show --json", hand.hand)] = ["hands", "show", str(hand.hand), "--json"]
        jobs[("hands show", hand.hand)] = ["hands", "show", str(hand.hand)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = {key: pool.submit(gm, *args, "--db", db) for key, args in jobs.items()}
        return {key: run.result().stdout for key, run in runs.items()}


def _part_about(command: str, output: str, hand: Running) -> str:
    """The part of a many-table view that is about the hand's table."""
    if command == "tables list --json":
        table = next((t for t in json.loads(output) if t["id"] == hand.table), {})
        return json.dumps(table) if table.get("hand") == hand.hand else ""
    return "\n".join(line for line in output.splitlines() if hand.table in line)


def _check(command: str, output: str, hand: Running) -> None:
    leaked = _leaks(output, hand)
    assert not leaked, (
        f"{command}: hole cards {sorted(leaked)} of running hand {hand.hand} "
        f"({hand.table}) shown:\n{output}"
    )
    if hand.game == "three-card" and not command.startswith(("tables list", "tables watch")):
        assert not CARD.findall(output), (
            f"{command}: a card of running three-card hand {hand.hand} shown:\n{output}"
        )


def test_g3_no_hole_card_in_any_view_of_a_running_hand(live, gm) -> None:
    db, host = live
    scanned: dict[str, set[tuple[int, str]]] = {"stud5": set(), "three-card": set()}
    sampled: dict[int, Running] = {}

    def scan(hands: dict[int, Running]) -> None:
        """Every view of the running hands, read while the host is still (the views of one
        hand only if it is new or has dealt more cards since it was last scanned)."""
        changed = [hand for hand in hands.values() if sampled.get(hand.hand) != hand]
        outputs = _views(gm, db, changed)
        assert still_running(db, list(hands)) == set(hands), "the host played during the reads"
        for hand in hands.values():
            for (command, about), output in outputs.items():
                if about not in (None, hand.hand):
                    continue
                text = _part_about(command, output, hand) if about is None else output
                assert text, (
                    f"{command} shows nothing of running hand {hand.hand} ({hand.table}):\n{output}"
                )
                _check(command, text, hand)
                scanned[hand.game].add((hand.hand, command))
            if hand in changed:
                _check_positive_controls(outputs, hand)
        sampled.update(hands)

    def dealt() -> dict[int, Running] | None:
        """Running hands, once enough of each game have their hole cards dealt."""
        hands = running_hands(db)
        per_game = Counter(hand.game for hand in hands.values())
        return hands if all(per_game[game] >= WANTED_PER_GAME for game in scanned) else None

    def later_street() -> dict[int, Running] | None:
        """Running hands, once a stud5 hand scanned before has dealt another street."""
        hands = running_hands(db)
        return (
            hands
            if any(
                hand.game == "stud5"
                and hand.hand in sampled
                and hand.face_up > sampled[hand.hand].face_up
                for hand in hands.values()
            )
            else None
        )

    scan(
        host.run_until(
            dealt,
            within=WITHIN_S,
            what=f"{WANTED_PER_GAME} running hands of each game with their hole cards dealt",
        )
    )
    scan(
        host.run_until(
            later_street, within=WITHIN_S, what="a later street of a stud5 hand scanned before"
        )
    )
    for game, seen in scanned.items():
        assert len({hand for hand, _ in seen}) >= WANTED_PER_GAME, (game, seen)
        assert {command for _, command in seen} == set(COMMANDS), (game, seen)

    _check_after_the_hands_end(gm, db, host, sampled)


def _check_positive_controls(outputs: dict, hand: Running) -> None:
    """The scan can see cards: the face-up cards of a running stud5 hand are shown."""
    if hand.game != "stud5" or not hand.face_up:
        return
    text = outputs[("hands show", hand.hand)]
    assert "??" in text and set(CARD.findall(text)) & hand.face_up, text
    report = json.loads(outputs[("hands show --json", hand.hand)])
    assert report["seed"] is None and report["outcome"] == "running"


def _check_after_the_hands_end(gm, db: Path, host, sampled: dict[int, Running]) -> None:
    """Stop the host (running hands finish or are voided); now every card is shown."""
    host.stop()
    assert not [m for m in host.messages if "internal error" in m], host.messages
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = {
            (hand.hand, form): pool.submit(gm, "hands", "show", hand.hand, *form, "--db", db)
            for hand in sampled.values()
            for form in [("--json",), ()]
        }
        shown = {key: run.result().stdout for key, run in runs.items()}
    for hand in sampled.values():
        report = json.loads(shown[(hand.hand, ("--json",))])
        assert report["outcome"] in ("settled", "voided")
        assert report["seed"] and report["seed_verifies"] is True
        dealt = {c["card"] for e in report["events"] if e["type"] == "deal" for c in e["cards"]}
        assert hand.hole <= dealt
        text = shown[(hand.hand, ())]
        assert hand.hole <= set(CARD.findall(text)), (sorted(hand.hole), text)
        assert f"seed: {report['seed']} verifies" in text
