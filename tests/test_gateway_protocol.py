"""The player protocol's client messages (issue 25, items 2 and 9): gateway/protocol.py
reads every frame a hostile client may send, and agrees with the published JSON Schema.

- every example in docs/protocol.md reads, and validates against its schema;
- the reader and the schema give the same verdict on valid messages and on messages one
  change away from valid (hypothesis), and the reader never raises anything but
  ProtocolError on any bytes at all (a fuzz test of the parser);
- the cases a schema cannot see: a name given twice, NaN, a frame too big, nesting.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from gmtool.bounds import MAX_BALANCE
from gmtool.gateway.protocol import (
    ACT_VERBS,
    MAX_FRAME,
    MESSAGES,
    PROTOCOL,
    ClientMessage,
    ProtocolError,
    encode,
    read_client,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "gmtool" / "gateway" / "schemas"
CLIENT = Draft202012Validator(json.loads((SCHEMAS / "client.schema.json").read_text("utf-8")))
DOC = (ROOT / "docs" / "protocol.md").read_text("utf-8")
TOKEN = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhbm4ifQ.c2ln"


def _examples(kind: str) -> list[str]:
    return re.findall(rf"```json {kind}\n(.*?)\n```", DOC, re.S)


def test_the_schema_is_a_valid_json_schema() -> None:
    Draft202012Validator.check_schema(CLIENT.schema)


@pytest.mark.parametrize("frame", _examples("client"))
def test_every_documented_client_message_reads_and_validates(frame: str) -> None:
    message = read_client(frame)
    assert CLIENT.is_valid(json.loads(frame)), frame
    assert message.type in MESSAGES


def test_the_documented_examples_cover_every_client_message() -> None:
    shown = {json.loads(frame)["type"] for frame in _examples("client")}
    assert shown == set(MESSAGES)


def test_documented_error_frames_are_what_the_reader_answers() -> None:
    malformed = [json.loads(f) for f in _examples("server") if '"malformed"' in f]
    assert malformed
    for error in malformed:
        bad = {"type": "act", "table": "qq-showhand-junior-1", "verb": "raise", "id": "a17"}
        caught = _refusal(json.dumps(bad))
        assert caught.frame() == error


SERVER = Draft202012Validator(json.loads((SCHEMAS / "server.schema.json").read_text("utf-8")))


def test_every_documented_server_message_validates_and_every_kind_is_shown() -> None:
    Draft202012Validator.check_schema(SERVER.schema)
    frames = [json.loads(frame) for frame in _examples("server")]
    for frame in frames:
        assert SERVER.is_valid(frame), frame
    kinds = {ref["$ref"].rsplit("/", 1)[1] for ref in SERVER.schema["oneOf"]}
    assert {frame["type"] for frame in frames} == kinds


# -- one verdict: the reader and the schema ------------------------------------------------

IDS = st.from_regex(r"\A[a-z0-9][a-z0-9._-]{0,12}\Z")
NAMES = st.text(st.characters(codec="ascii", categories=["L", "N", "P"]), min_size=1, max_size=8)
AMOUNTS = st.integers(1, MAX_BALANCE)


def _valid() -> st.SearchStrategy[dict]:
    request = st.one_of(st.none(), st.from_regex(r"\A[A-Za-z0-9._:-]{1,8}\Z"))
    resume = st.fixed_dictionaries({"table": IDS, "seq": st.integers(0, 10**6)})
    act = st.one_of(
        st.fixed_dictionaries(
            {"verb": st.sampled_from(["bet", "raise", "follow"]), "amount": AMOUNTS}
        ),
        st.fixed_dictionaries({"verb": st.just("ante"), "amount": AMOUNTS}),
        st.fixed_dictionaries(
            {"verb": st.just("ante"), "target": st.sampled_from(["max", "clear"])}
        ),
        st.fixed_dictionaries({"verb": st.just("buy"), "target": NAMES}),
        st.fixed_dictionaries(
            {"verb": st.sampled_from(["call", "check", "fold", "allin", "look", "open", "pass"])}
        ),
    )
    bodies = st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("hello"), "protocol": st.just(PROTOCOL), "token": st.just(TOKEN)},
            optional={"resume": resume},
        ),
        st.fixed_dictionaries({"type": st.just("lobby")}),
        st.fixed_dictionaries({"type": st.just("sit"), "table": IDS}),
        st.fixed_dictionaries({"type": st.just("sit"), "profile": IDS, "tier": IDS}),
        *(
            st.fixed_dictionaries({"type": st.just(kind), "table": IDS})
            for kind in ("start", "look", "leave")
        ),
        st.builds(lambda a, t: {"type": "act", "table": t, **a}, act, IDS),
    )
    return st.builds(lambda b, r: b if r is None else {**b, "id": r}, bodies, request)


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(codec="ascii"), max_size=6),
    st.sampled_from([*ACT_VERBS, "max", "clear", "", " x", 1.0, [], {}, {"table": "t"}]),
)


@st.composite
def _near_valid(draw) -> dict:
    """A valid message with one change: a field removed, added, or given another value."""
    message = dict(draw(_valid()))
    change = draw(st.sampled_from(["drop", "add", "replace"]))
    name = draw(
        st.sampled_from(
            sorted({*message, "amount", "target", "table", "protocol", "seq", "resume", "x"})
        )
    )
    if change == "drop":
        message.pop(name, None)
    else:
        message[name] = draw(JUNK)
    return message


@settings(max_examples=400, deadline=None)
@given(_valid())
def test_valid_messages_read_and_validate(message: dict) -> None:
    read = read_client(json.dumps(message))
    assert CLIENT.is_valid(message), list(CLIENT.iter_errors(message))
    assert isinstance(read, ClientMessage) and read.type == message["type"]
    assert read.id == message.get("id")


@settings(max_examples=1500, deadline=None)
@given(_near_valid())
def test_the_reader_and_the_schema_agree_one_change_from_valid(message: dict) -> None:
    try:
        read_client(json.dumps(message))
        taken = True
    except ProtocolError as refusal:
        taken = False
        assert refusal.code in ("malformed", "unknown", "version"), refusal.code
        assert refusal.message and "Traceback" not in refusal.message
    if _whole_float(message) or _hidden_text(message):  # what a schema cannot see: 1.0 is
        assert not taken, message  # an integer to it; names with control characters pass it
        return
    assert taken == CLIENT.is_valid(message), (message, taken)


def _hidden_text(value: object) -> bool:
    """A string with a control character anywhere in `value` (the reader refuses those in
    names and targets; the schema's patterns do not say so)."""
    if isinstance(value, str):
        return any(ord(c) < 32 or ord(c) == 127 for c in value)
    if isinstance(value, dict):
        return any(_hidden_text(v) for v in value.values())
    if isinstance(value, list):
        return any(_hidden_text(v) for v in value)
    return False


def _whole_float(value: object) -> bool:
    """A number written with a fraction that is whole (1.0), anywhere in `value`."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_whole_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_whole_float(v) for v in value)
    return False


def _nest(children: st.SearchStrategy) -> st.SearchStrategy:
    keys = st.sampled_from(["type", "id", "table", "verb", "amount", "target", "resume", "k"])
    return st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300), st.recursive(JUNK, _nest)))
def test_any_frame_is_a_message_or_a_protocol_error(frame) -> None:
    """The fuzz test of the parser: bytes, text, any JSON value: never another exception."""
    if not isinstance(frame, (bytes, str)):
        frame = json.dumps(frame)
    try:
        read_client(frame)
    except ProtocolError as refusal:
        assert set(refusal.frame()) <= {"type", "error", "message", "id"}
        json.loads(encode(refusal.frame()))  # the answer itself is a frame


# -- what a schema cannot see --------------------------------------------------------------


def _refusal(frame: str | bytes) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        read_client(frame)
    return caught.value


def test_a_name_given_twice_is_refused() -> None:
    frame = '{"type": "act", "table": "t1", "verb": "call", "verb": "fold"}'
    assert _refusal(frame).code == "malformed"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "2.0", "true"])
def test_an_amount_that_is_not_a_whole_json_number_is_refused(number: str) -> None:
    frame = f'{{"type": "act", "table": "t1", "verb": "bet", "amount": {number}}}'
    assert _refusal(frame).code == "malformed"


def test_an_amount_past_what_a_player_can_hold_is_refused() -> None:
    frame = json.dumps({"type": "act", "table": "t1", "verb": "bet", "amount": MAX_BALANCE + 1})
    assert "1,000,000,000,000,000" in _refusal(frame).message


def test_a_frame_too_big_is_refused_before_it_is_parsed() -> None:
    frame = json.dumps({"type": "lobby", "id": "x", "pad": " " * MAX_FRAME})
    refusal = _refusal(frame)
    assert refusal.code == "too_big" and refusal.request is None
    assert _refusal(frame.encode()).code == "too_big"


def test_deep_nesting_is_refused_without_a_recursion_error() -> None:
    assert _refusal("[" * 4_000 + "]" * 4_000).code == "malformed"  # < MAX_FRAME
    nested = json.dumps({"type": "hello", "protocol": 1, "token": TOKEN, "resume": {"t": [[[1]]]}})
    assert _refusal(nested).code == "malformed"


def test_bytes_that_are_not_utf8_are_refused() -> None:
    assert _refusal(b'{"type": "lobby", "id": "\xff"}').code == "malformed"


def test_another_protocol_version_is_named() -> None:
    refusal = _refusal(json.dumps({"type": "hello", "protocol": 2, "token": TOKEN, "id": "h"}))
    assert (refusal.code, refusal.request) == ("version", "h")
    assert "protocol 1, not 2" in refusal.message


def test_an_unknown_type_echoes_the_request_id() -> None:
    refusal = _refusal(json.dumps({"type": "gm_adjust", "id": "q9"}))
    assert refusal.frame() == {
        "type": "error",
        "error": "unknown",
        "message": '"type" must be one of hello, lobby, sit, start, act, look, leave',
        "id": "q9",
    }


@pytest.mark.parametrize("name", ["evil \u202egnp", "bot\u200b-001", "a\x1bb", "ㅤ", " pad"])
def test_a_buy_target_with_a_hidden_character_is_refused(name: str) -> None:
    frame = json.dumps({"type": "act", "table": "t1", "verb": "buy", "target": name})
    assert _refusal(frame).code == "malformed"


def test_no_gm_operation_reads_as_a_client_message() -> None:
    """Item 3: no GM operation is reachable over the player socket."""
    for kind in ("kick", "close", "adjust", "deploy", "grant", "open", "witness"):
        assert _refusal(json.dumps({"type": kind, "table": "t1"})).code == "unknown"
    for verb in ("kick", "timeout", "escape", "disconnect", "reconnect", "wait", "join"):
        frame = json.dumps({"type": "act", "table": "t1", "verb": verb})
        assert _refusal(frame).code == "malformed", verb
