"""Replaying a recorded hand through the engine, under the config it was played with (G4).

The stored hand row gives the tier, seats, banker, ante and the revealed seed; the deck
is re-derived from the seed (and checked against the commitment made when the hand
started); the inputs recorded in the hand's events are applied to a fresh hand; every
event the engine produces must equal the stored one, and so must the settlement.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import orjson

from gmtool.canonical import canonical_json
from gmtool.engine.cards import Card
from gmtool.engine.deck import ALGORITHM, commitment
from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import ENGINE_VERSION, INPUT_TYPES, Action, Event
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import Seat
from gmtool.engine.play import shuffled_source, start_hand
from gmtool.engine.rankings import deck_for
from gmtool.engine.versions import REVISIONS
from gmtool.store import scan
from gmtool.store.configs import load_config
from gmtool.store.db import Store, StoreError

_NOT_REPLAYED = {"hand_voided"}  # written by the host, not the engine
# What a recorded input may meet in the engine: a rule it breaks, or (edited into the
# store) a value of the wrong type, such as an amount written as text or a list.
_REFUSED = (IllegalAction, SetupError, TypeError)


class StoredEvent(NamedTuple):
    """One recorded event of a hand as stored; `payload` is its canonical JSON text.
    Replay takes any (seq, type, payload) tuples (audit passes plain ones, straight from
    its scan of the chain)."""

    seq: int
    type: str
    payload: str


class ReplaySetup(NamedTuple):
    """What replay needs of a configuration, derived from it once (callers that replay
    many hands keep one per config id)."""

    config: Mapping
    ranking: object
    cards: tuple[Card, ...]  # the deck in canonical order, which a seed shuffles

    @classmethod
    def of(cls, config: Mapping) -> ReplaySetup:
        return cls(config, ranking_for(config), deck_for(config).cards)


@dataclass
class ReplayResult:
    hand: int
    ok: bool = True
    problems: list[dict] = field(default_factory=list)
    events_checked: int = 0

    def fail(self, kind: str, detail: str, seq: int | None = None) -> None:
        self.ok = False
        problem = {"hand": self.hand, "kind": kind, "detail": detail}
        if seq is not None:
            problem["seq"] = seq
        self.problems.append(problem)

    def as_json(self) -> dict:
        return {
            "hand": self.hand,
            "ok": self.ok,
            "problems": self.problems,
            "events_checked": self.events_checked,
        }


load_hand = scan.hand_row


def stored_events(store: Store, hand_id: int) -> list[StoredEvent]:
    """A hand's events in chain order."""
    return [StoredEvent(*row) for row in scan.hand_event_rows(store, hand_id)]


def replay_hand(store: Store, hand_id: int, configs: dict[str, dict] | None = None) -> ReplayResult:
    """Re-run a stored hand and compare; caches may be shared across many hands."""
    hand_row = load_hand(store, hand_id)
    return replay_loaded(
        hand_row,
        stored_events(store, hand_id),
        lambda cid: ReplaySetup.of(_config(store, cid, configs)),
    )


def _config(store: Store, config_id: str, cache: dict | None) -> dict:
    if cache is None:
        return load_config(store, config_id)
    if config_id not in cache:
        cache[config_id] = load_config(store, config_id)
    return cache[config_id]


def decode_payloads(events: list[StoredEvent]) -> list | None:
    """Every event's payload as a value, in one parse (None if one is not JSON at all).

    A payload that is not text (edited into the store: SQLite keeps any type) is not JSON.
    """
    payloads = [payload for _, _, payload in events]
    if not all(type(payload) is str for payload in payloads):
        return None
    return loads_or_none("[" + ",".join(payloads) + "]")


def loads_or_none(text: str):
    """The value of a JSON text exactly as the json module reads it, or None when it is
    not JSON (or not text at all: edited into the store).

    orjson parses in half the time json takes and gives the same values, but for integers
    beyond 64 bits (it makes them floats) and NaN, Infinity or lone surrogates (it refuses
    them): text with a run of 19 digits, or that orjson refuses, goes to json instead.
    """
    if type(text) is not str:
        return None
    try:
        data = text.encode()
        if _LONG_NUMBER not in data.translate(_DIGITS_ONLY):
            return orjson.loads(data)
    except (UnicodeEncodeError, ValueError):
        pass
    try:
        return json.loads(text)
    except ValueError:
        return None


_DIGITS_ONLY = bytes(0x39 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))  # 0-9 -> 9
_LONG_NUMBER = b"9" * 19  # orjson is exact from -2**63 to 2**64 - 1: up to 18 digits are safe


def replay_loaded(
    hand_row: dict,
    events: list[StoredEvent],
    setup_of: Callable[[str], ReplaySetup],
    values: list | None = None,
) -> ReplayResult:
    """Replay from an already loaded hand row and its events (audit streams them), with
    the setup of the hand's config id (StoreError if there is none); `values` are the
    events' decoded payloads when the caller has them already."""
    result = ReplayResult(hand_row["id"])
    if hand_row["outcome"] == "running":
        result.fail("running", "the hand has not ended: its seed is still secret")
        return result
    seed_hex = hand_row["seed"]
    if not seed_hex:
        result.fail("seed_missing", "no seed was revealed for this hand")
        return result
    try:
        seed = bytes.fromhex(seed_hex)
    except (TypeError, ValueError):
        result.fail("commitment", "the revealed seed is not hexadecimal text")
        return result
    if commitment(seed) != hand_row["commitment"]:
        result.fail(
            "commitment",
            "the revealed seed does not match the commitment made when the hand started",
        )
        return result
    try:
        setup = setup_of(hand_row["config_id"])
    except StoreError as error:
        result.fail("config_missing", str(error))
        return result
    try:
        seats = [Seat(s["player"], s["coins"]) for s in loads_or_none(hand_row["seats"])]
    except (TypeError, KeyError):
        result.fail("replay", "the hand's seats are not a list of players and coins")
        return result

    if values is None:
        values = decode_payloads(events)
    engine = _recorded_engine(events, values)
    if engine not in REVISIONS:
        result.fail(
            "engine_version",
            f"recorded by engine version {engine}; this gmtool "
            f"replays versions {', '.join(REVISIONS)} (replay it with that release)",
        )
        return result

    def start():
        return start_hand(
            setup.config,
            hand_row["tier"],
            seats,
            hand_row["banker"],
            shuffled_source(setup.cards, seed),
            hand_row["ante"],  # ante, ranking, engine (positional: a call a hand)
            setup.ranking,
            engine,
        )

    try:
        hand = start()
    except (SetupError, TypeError) as error:  # TypeError: seats or ante of the wrong type
        result.fail("replay", f"the hand cannot start again: {error}")
        return result
    checked = _fast_compare(hand, events, values) if values is not None else None
    if checked is not None:
        result.events_checked = checked
    else:
        _compare(start(), events, result)  # again, event by event, to name the divergence
    if checked is not None and not result.problems:  # (`hand` played every input)
        _row_agrees(hand_row, hand, result)
    return result


def _row_agrees(hand_row: Mapping, hand, result: ReplayResult) -> None:
    """The hand row's own copies of what its events say (the list and the console read
    them): its winners, ante and deck algorithm. A hand after the newest checkpoint has
    only its events' chain to hold these to (outside probe r5: a tail hand's winners
    rewritten, the log recomputed)."""
    if "winners" in hand_row:
        settled = hand.settlement.winners if hand.settlement is not None else None
        stored = loads_or_none(hand_row["winners"]) if hand_row["winners"] is not None else None
        if hand_row["outcome"] == "settled" and stored != list(settled or []):
            result.fail(
                "replay",
                f"the hand's recorded winners {stored} are not its settlement's "
                f"{list(settled or [])}",
            )
    started = hand.events[0][1] if hand.events and hand.events[0][0] == "hand_started" else {}
    if isinstance(started, dict) and "ante" in started and started["ante"] != hand_row["ante"]:
        result.fail(
            "replay",
            f"the hand's recorded ante {hand_row['ante']} is not its start's {started['ante']}",
        )
    if "algorithm" in hand_row and hand_row["algorithm"] != ALGORITHM:
        result.fail(
            "replay",
            f"the hand's deck algorithm {hand_row['algorithm']!r} is not {ALGORITHM!r}, the "
            "one its seed was dealt by",
        )


def _recorded_engine(events: list[StoredEvent], values: list | None) -> str | None:
    """The engine version the hand's `hand_started` names: the rules it replays by.

    A hand whose first event is not `hand_started` replays by the current engine and
    fails on the missing event, which names the edit."""
    if events and events[0][1] == "hand_started":
        started = values[0] if values is not None else loads_or_none(events[0][2])
        return started.get("engine") if isinstance(started, dict) else None
    return ENGINE_VERSION


def _fast_compare(hand, events: list[StoredEvent], values: list) -> int | None:
    """Apply every recorded input in order, then compare all events at once.

    The comparison is of decoded values (the same types, keys, strings, numbers and
    lists), which is what the engine's events mean; the bytes of each stored event are
    pinned by its hash in the table's chain. Sound on its own: equal final lists mean
    the inputs reproduced the record exactly. Returns the number of events checked, or
    None on any difference (the caller then replays event by event, comparing canonical
    JSON text, to name the first divergence).
    """
    stored = [
        (type_, fields)
        for (_, type_, _), fields in zip(events, values)
        if type_ not in _NOT_REPLAYED
    ]
    apply, action_of = hand.apply, Action.from_fields
    try:
        for type_, fields in stored:
            if type_ in INPUT_TYPES and type(fields) is dict and "cause" not in fields:
                apply(action_of(type_, fields))
    except _REFUSED:
        return None
    mine = hand.events
    if mine != stored:  # Event tuples against (type, fields) tuples
        return None
    return len(mine)


def _compare(hand, events: list[StoredEvent], result: ReplayResult) -> None:
    """Apply the recorded inputs; each event must equal, byte for byte, what the engine gives."""
    produced = 0  # how many of the engine's events have been compared
    for seq, type_, payload in events:
        if type_ in _NOT_REPLAYED:
            continue
        if produced >= len(hand.events):
            fields = loads_or_none(payload)
            action = Action.from_event(Event(type_, fields)) if type(fields) is dict else None
            if action is None:
                result.fail(
                    "replay",
                    f"event {seq} ({type_}) is not one the engine produced at this point",
                    seq,
                )
                return
            try:
                hand.apply(action)
            except _REFUSED as error:
                result.fail(
                    "replay",
                    f"event {seq}: the recorded {action} is refused by the engine: {error}",
                    seq,
                )
                return
        mine = hand.events[produced]
        produced += 1
        result.events_checked += 1
        if mine.type != type_ or canonical_json(mine.fields) != payload:
            result.fail(
                "replay",
                f"event {seq}: recorded {type_} {payload} but the engine "
                f"gives {mine.type} {canonical_json(mine.fields)}",
                seq,
            )
            return
    if produced < len(hand.events):
        extra = hand.events[produced]
        result.fail(
            "replay",
            f"the engine continues with {extra.type} after the last "
            "recorded event (events were deleted)",
        )
