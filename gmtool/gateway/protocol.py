"""The player protocol, version 1 (docs/protocol.md): what a client may send, read strictly.

A frame from a player's socket is hostile input until it is read: `read_client` turns it
into one `ClientMessage` or raises `ProtocolError`, whose `frame()` is the error frame the
gateway answers with (`{"type": "error", "error": CODE, "message": ...}`); nothing else is
ever raised, whatever the bytes (tests/test_gateway_protocol.py fuzzes it). A frame is read
exactly as the JSON Schema in gateway/schemas/client.schema.json describes it (the tests
hold the two to the same verdict): an object with a known `type`, only the fields that type
has, each of its JSON type (`true` is not a number, `1.0` is not an amount), no name twice,
every string matching its pattern, no number past what a player can hold.

The engine stays the only judge of what is legal: an `act` whose verb exists is well-formed
here, and the engine says whether it is the player's turn and what the amount may be.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from gmtool.bounds import MAX_BALANCE, composed, unsafe_characters
from gmtool.engine.events import AMOUNT_VERBS, STUD5_VERBS, THREE_CARD_VERBS

PROTOCOL = 1  # the version a client names in `hello`; docs/protocol.md says what changes it
MAX_FRAME = 8_192  # bytes: the largest client frame (the biggest valid one is ~1 KiB)
MAX_TOKEN = 4_096  # characters of a token (a JWT signed with Ed25519 is ~300)
MAX_DEPTH = 4  # JSON nesting a client frame may have (`hello.resume` is the deepest: 2)

# What a player may do at a table, exactly as the engine names it: the betting verbs of
# five-card stud and three-card, and the owner-ante table's ante and agreement (L rules).
# The host's own inputs (timeout, disconnect, escape, kick...) are never a player's.
# `amount`: with bet, raise and follow (the engine's AMOUNT_VERBS), and with ante unless its
# `target` is "max" or "clear" (L2's buttons); `target`: the player a three-card buy buys.
ACT_VERBS = (*STUD5_VERBS, *THREE_CARD_VERBS, "ante", "agree", "reject")
ANTE_BUTTONS = ("max", "clear")
MAX_NAME = 64  # characters of a player's name in a frame

_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # table, profile and tier ids
_REQUEST = re.compile(r"[A-Za-z0-9._:-]{1,64}")  # a client's own request id, echoed back
_TOKEN = re.compile(rf"[!-~]{{1,{MAX_TOKEN}}}")  # a JWT: base64url parts and dots


class ProtocolError(Exception):
    """A frame the gateway does not take: `code` is the error frame's `error`; `request`
    is the client's request id when the frame had a readable one (echoed back)."""

    def __init__(self, code: str, message: str, request: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request = request

    def frame(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "error", "error": self.code, "message": self.message}
        if self.request is not None:
            out["id"] = self.request
        return out


@dataclass(frozen=True)
class ClientMessage:
    """One well-formed client message: its `type`, the client's request `id` (if any) and
    its other fields, as read."""

    type: str
    id: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


# For each message type: its required and its optional fields, each with what it must be.
_TEXT, _ID_T, _COUNT, _AMOUNT, _VERB, _RESUME = "text", "id", "count", "amount", "verb", "resume"
MESSAGES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "hello": ({"protocol": _COUNT, "token": "token"}, {"resume": _RESUME}),
    "lobby": ({}, {}),
    "sit": ({}, {"table": _ID_T, "profile": _ID_T, "tier": _ID_T}),
    "start": ({"table": _ID_T}, {}),
    "act": ({"table": _ID_T, "verb": _VERB}, {"amount": _AMOUNT, "target": "name"}),
    "look": ({"table": _ID_T}, {}),
    "leave": ({"table": _ID_T}, {}),
}


def read_client(frame: str | bytes) -> ClientMessage:
    """The message in one frame from a client, or ProtocolError saying what is wrong."""
    size = len(frame.encode("utf-8", "surrogatepass") if isinstance(frame, str) else frame)
    if size > MAX_FRAME:
        raise ProtocolError("too_big", f"a frame may hold at most {MAX_FRAME:,} bytes")
    if isinstance(frame, bytes):
        try:
            frame = frame.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("malformed", "a frame is UTF-8 JSON text") from None
    try:
        data = json.loads(frame, parse_constant=_no_constant, object_pairs_hook=_no_twice)
    except (ValueError, RecursionError):
        raise ProtocolError("malformed", "a frame is one JSON object") from None
    if not isinstance(data, dict):
        raise ProtocolError("malformed", "a frame is one JSON object")
    if _depth(data) > MAX_DEPTH:
        raise ProtocolError("malformed", f"a frame nests at most {MAX_DEPTH} levels deep")
    request = data.get("id")
    if "id" in data and not (isinstance(request, str) and _REQUEST.fullmatch(request)):
        raise ProtocolError("malformed", 'the request "id" is 1-64 letters, digits or ._:-')
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in MESSAGES:
        raise ProtocolError(
            "unknown",
            f'"type" must be one of {", ".join(MESSAGES)}',
            request,
        )
    required, optional = MESSAGES[kind]
    fields = {k: v for k, v in data.items() if k not in ("type", "id")}
    extra = sorted(set(fields) - set(required) - set(optional))
    if extra:
        raise ProtocolError("malformed", f"{kind} has no field {_quoted(extra)}", request)
    missing = [name for name in required if name not in fields]
    if missing:
        raise ProtocolError("malformed", f"{kind} needs {_quoted(missing)}", request)
    for name, value in fields.items():
        problem = _check(required.get(name) or optional[name], value)
        if problem:
            raise ProtocolError("malformed", f"{kind}.{name} {problem}", request)
    _check_message(kind, fields, request)
    return ClientMessage(kind, request, fields)


def _check_message(kind: str, fields: dict[str, Any], request: str | None) -> None:
    """What one field cannot say alone: the protocol version, where to sit, an amount."""
    if kind == "hello" and fields["protocol"] != PROTOCOL:
        raise ProtocolError(
            "version", f"this gateway speaks protocol {PROTOCOL}, not {fields['protocol']}", request
        )
    if kind == "sit":
        by_table, by_room = "table" in fields, "profile" in fields or "tier" in fields
        if by_table == by_room or (by_room and not ("profile" in fields and "tier" in fields)):
            raise ProtocolError(
                "malformed", "sit names a table, or a room by its profile and tier", request
            )
    if kind == "act":
        verb, given = fields["verb"], ("amount" in fields, "target" in fields)
        wanted = _ACT_FIELDS.get(verb, ((False, False),))
        if given not in wanted or (
            verb == "ante" and given[1] and fields["target"] not in ANTE_BUTTONS
        ):
            raise ProtocolError(
                "malformed",
                f"act {verb} {_ACT_WORDS.get(verb, 'takes no amount and no target')}",
                request,
            )


_ACT_FIELDS = {  # (amount given, target given): what each verb may carry
    **{verb: ((True, False),) for verb in AMOUNT_VERBS},
    "ante": ((True, False), (False, True)),
    "buy": ((False, True),),
}
_ACT_WORDS = {
    **{verb: "takes an amount and no target" for verb in AMOUNT_VERBS},
    "ante": 'takes an amount, or a target "max" or "clear"',
    "buy": "takes the target it buys (a player) and no amount",
}


def _check(kind: str, value: Any) -> str | None:
    """What is wrong with a field's value (None: nothing)."""
    if kind in (_COUNT, _AMOUNT):
        if type(value) is not int:
            return "must be a whole number"
        low = 1 if kind == _AMOUNT else 0
        if not low <= value <= MAX_BALANCE:
            return f"must be from {low} to {MAX_BALANCE:,}"
        return None
    if kind == _RESUME:
        return _check_resume(value)
    if not isinstance(value, str):
        return "must be a string"
    if kind == _ID_T:
        return None if _ID.fullmatch(value) else "is not an id (a-z, 0-9, . _ -; at most 64)"
    if kind == _VERB:
        return None if value in ACT_VERBS else f"must be one of {', '.join(ACT_VERBS)}"
    if kind == "name":
        if (
            not 0 < len(value) <= MAX_NAME
            or unsafe_characters(value)
            or value != value.strip()
            or value != composed(value)
        ):
            return f"is not a player's name (1 to {MAX_NAME} characters, plain text)"
        return None
    if not _TOKEN.fullmatch(value):  # the one other string: a token
        return f"must be a token: 1 to {MAX_TOKEN:,} printable ASCII characters, no space"
    return None


def _check_resume(value: Any) -> str | None:
    if not isinstance(value, dict) or set(value) != {"table", "seq"}:
        return 'must be {"table": ID, "seq": N}'
    if _check(_ID_T, value["table"]) or _check(_COUNT, value["seq"]):
        return "holds a table id and the last event number seen"
    return None


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):  # `{"verb": "call", "verb": "fold"}` says two things
        raise ValueError("a name given twice")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: Python's json takes them


def _quoted(names: list[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def encode(message: dict[str, Any]) -> str:
    """A server message as the frame sent: compact JSON, no NaN (a bug, not a frame)."""
    for value in message.values():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{message.get('type')}: a number that is not finite")
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
