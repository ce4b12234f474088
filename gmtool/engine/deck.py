"""Provably fair dealing: a deck order derived from a secret seed, committed in advance.

The host draws a secret seed per hand and stores ``commitment(seed)`` when the hand
starts; it reveals the seed when the hand ends. Anyone can then recompute the deck
order from the seed, check that it hashes to the commitment, and compare it with the
cards that were dealt (docs/architecture.md, "The engine's contract"). The algorithm is
fixed and named ``ALGORITHM``; a new algorithm gets a new name, never a silent change.

Algorithm "hmac-sha256-fy-v1", exactly:

1. Commitment: ``sha256(seed)`` as 64 lowercase hex digits.
2. Byte stream: block ``i`` (i = 0, 1, 2, ...) is ``HMAC-SHA256(key=seed, msg=i)``
   with ``i`` as 8 bytes big-endian; the stream is block 0, block 1, ... concatenated.
3. Draw: read the next 4 bytes of the stream as an unsigned big-endian integer ``x``.
   To draw uniformly from ``0..bound-1``: let ``limit = 2**32 - (2**32 % bound)``; if
   ``x < limit`` the result is ``x % bound``, otherwise discard ``x`` and draw again
   (rejection sampling, so there is no modulo bias).
4. Shuffle (Fisher-Yates, Durstenfeld): start from the cards in canonical deck order
   (rank ascending, then suit in the profile's listed order: 8S 8H 8C 8D 9S ...); for
   ``i`` from ``n-1`` down to ``1``: draw ``j`` from ``0..i`` (bound ``i+1``) and swap
   positions ``i`` and ``j``. Position 0 of the result is the first card dealt.

Re-deriving in a few lines of any language::

    stream = b"".join(hmac(seed, i.to_bytes(8, "big"), sha256) for i in count())
    for i in range(n - 1, 0, -1):
        j = draw(i + 1)            # 4 bytes, rejection as in step 3
        cards[i], cards[j] = cards[j], cards[i]
"""

from __future__ import annotations

import hashlib
import hmac
import operator
import struct
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NamedTuple, TypeVar

from gmtool.errors import UsageError

ALGORITHM = "hmac-sha256-fy-v1"
_DRAW_BYTES = 4
_DRAW_SPAN = 1 << (8 * _DRAW_BYTES)

T = TypeVar("T")
_Keyed = tuple["hashlib._Hash", "hashlib._Hash"]  # SHA-256 fed the inner, the outer padded key


class SeedError(UsageError, ValueError):
    """A seed the deck cannot be derived from (empty or not bytes)."""


def hand_seed(key: bytes, table_id: str, number: int) -> bytes:
    """A hand's seed: HMAC-SHA256(host key, "table#number") (house/seeds.py keeps the key)."""
    return hmac.new(key, f"{table_id}#{number}".encode(), hashlib.sha256).digest()


def commitment(seed: bytes) -> str:
    """The public commitment to a seed: sha256(seed) as lowercase hex."""
    return hashlib.sha256(_checked(seed)).hexdigest()


def shuffle(cards: Sequence[T], seed: bytes) -> tuple[T, ...]:
    """The deck order that ``seed`` determines (algorithm in the module docstring).

    ``cards`` must be in canonical order; the same seed always gives the same order.
    The words a shuffle needs without rejections are derived in one go (4 HMAC blocks
    for 28 cards); a rejection, which is rare (under 2**-25 a draw for decks of 52),
    takes one more block.
    """
    return _fisher_yates(list(cards), _checked(seed), _draws(len(cards)))


class _Draws(NamedTuple):
    """The Fisher-Yates draws of a deck (steps 3 and 4): for each, the position ``i`` it
    fills, its bound ``i + 1`` and the rejection limit of step 3."""

    positions: tuple[int, ...]
    bounds: tuple[int, ...]
    limits: tuple[int, ...]

    @classmethod
    def of(cls, pairs: Sequence[tuple[int, int]]) -> _Draws:
        """From (i, limit) pairs (tests pass harsher limits than the real ones)."""
        return cls(
            tuple(i for i, _ in pairs),
            tuple(i + 1 for i, _ in pairs),
            tuple(limit for _, limit in pairs),
        )


@lru_cache(maxsize=16)
def _draws(size: int) -> _Draws:
    """The draws of a ``size``-card deck."""
    return _Draws.of([(i, _DRAW_SPAN - _DRAW_SPAN % (i + 1)) for i in range(size - 1, 0, -1)])


def _fisher_yates(order: list[T], seed: bytes, draws: _Draws) -> tuple[T, ...]:
    """Steps 2-4: the words of the stream, then the swaps."""
    keyed = _keyed(seed)
    words = _block_words(keyed, 0, -(-len(draws.limits) // 8))
    if any(map(operator.ge, words, draws.limits)):
        words = _accepted(keyed, words, draws.limits)  # rare: a word is rejected (step 3)
    for i, j in zip(draws.positions, map(operator.mod, words, draws.bounds)):
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def _accepted(keyed: _Keyed, words: list[int], limits: Sequence[int]) -> list[int]:
    """The word each draw uses once rejected words are skipped (step 3), reading further
    blocks of the stream as needed."""
    accepted, at = [], 0
    for limit in limits:
        while True:
            if at == len(words):
                words += _block_words(keyed, len(words) // 8, 1)
            word = words[at]
            at += 1
            if word < limit:
                accepted.append(word)
                break
    return accepted


def _keyed(key: bytes) -> _Keyed:
    """HMAC-SHA256 keyed with a seed (RFC 2104): SHA-256 fed the inner and the outer padded
    key, hashed once and copied for every block (half the cost of copying an hmac.HMAC)."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    return hashlib.sha256(key.translate(_IPAD)), hashlib.sha256(key.translate(_OPAD))


_BLOCK = 64  # SHA-256's block size in bytes
_IPAD = bytes(x ^ 0x36 for x in range(256))  # byte tables: key.translate(_IPAD) = key ^ ipad
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _block_words(keyed: _Keyed, first: int, count: int) -> list[int]:
    """The 8 words of each HMAC block ``first .. first + count - 1`` of the stream (step 2);
    ``keyed`` is what `_keyed` gives."""
    inner_pad, outer_pad = keyed
    blocks = []
    for counter in range(first, first + count):  # HMAC(seed, counter), RFC 2104
        inner = inner_pad.copy()
        inner.update(counter.to_bytes(8, "big"))
        outer = outer_pad.copy()
        outer.update(inner.digest())
        blocks.append(outer.digest())
    return list(_words_struct(count).unpack(b"".join(blocks)))


@lru_cache(maxsize=16)
def _words_struct(blocks: int) -> struct.Struct:
    return struct.Struct(f">{8 * blocks}I")


def verify(seed: bytes, commitment_hex: str, cards: Sequence[T], dealt_order: Sequence[T]) -> bool:
    """True when ``seed`` matches the commitment and the dealt cards follow from it.

    ``dealt_order`` lists cards in the order they left the deck; a prefix of the full
    order is enough, since a hand that ends early deals only part of the deck.
    """
    if not isinstance(seed, bytes | bytearray) or not seed or not isinstance(commitment_hex, str):
        return False
    if not hmac.compare_digest(commitment(seed).encode(), commitment_hex.strip().lower().encode()):
        return False
    dealt = tuple(dealt_order)
    return shuffle(cards, seed)[: len(dealt)] == dealt if len(dealt) <= len(cards) else False


def uniform_below(bound: int, next_word: Callable[[], int]) -> int:
    """A uniform integer in ``0..bound-1`` from 32-bit words, by rejection (step 3)."""
    if not 0 < bound <= _DRAW_SPAN:
        raise ValueError(f"bound must be in 1..2**32, got {bound}")
    limit = _DRAW_SPAN - _DRAW_SPAN % bound
    while True:
        word = next_word()
        if word < limit:
            return word % bound


def _checked(seed: bytes) -> bytes:
    if not isinstance(seed, bytes | bytearray):
        raise SeedError(f"a seed is bytes, not {type(seed).__name__}")
    if not seed:
        raise SeedError("a seed must not be empty: an empty seed is public knowledge")
    return bytes(seed)
