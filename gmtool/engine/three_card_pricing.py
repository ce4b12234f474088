"""What things cost in Suihua three-card: follows (RULES H3, H5), buys (H7), opens (H8).

A player's *current bet* is the amount of their last follow, together with the state
(blind or seen) they made it in. Before their first follow it is the ante, which the
system posted blind for everyone (H3): buy and open prices of a player who has not
followed yet are multiples of it.

The first bet of a hand is set by the dealer's next player (H5, corrected 2026-12-02):
any amount of their own state, up to the cap; the ante is not a bet to follow. Every
later follow is checked against the *previous bet*: the last follow made in the hand by
anyone, even if that player has left the hand since. (Engines before version 4 had the
first speaker follow the ante as a blind bet: a seen 10 and a blind 5 of the 10-chip
room could never be played.)
Its minimum is a multiple of that bet (H5: seen after blind 2x, seen after seen 1x,
blind after seen 1/2, blind after blind 1x); the amount must also be one of the
follower's own amounts and never above the cap (H3). A blind player's amounts are the
union of the room's two blind columns, a seen player's the union of the two seen
columns (H5, corrected 2026-12-01): in the 10-chip room a seen player may follow a seen
20 with 20 or 40. Engines before version 3 used only the column of the pair (previous
state, own state); hands they recorded replay with it.
Should a minimum exceed the cap (a profile the validator lets through), the cap is
enough: the seed's "but never above the room's highest chips" wins.

Buy and open prices are set by H7 and H8 as multiples of the *target's* current bet;
they are prices, not follows, so the cap does not limit them (seen opening blind at a
blind bet of 10 costs 40 in the 20-cap room, as the seed's own example shows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from gmtool.engine.config import Compiled, EngineConfig, Tier, engine_config
from gmtool.engine.errors import SetupError
from gmtool.engine.versions import CURRENT, Revision

# (previous bettor is seen, this player is seen) -> (tier key, H5 minimum multiple)
FOLLOW_TABLES: dict[tuple[bool, bool], tuple[str, Fraction]] = {
    (False, False): ("blind_follows_blind", Fraction(1)),
    (True, True): ("seen_follows_seen", Fraction(1)),
    (True, False): ("blind_follows_seen", Fraction(1, 2)),
    (False, True): ("seen_follows_blind", Fraction(2)),
}
# (opener is seen, opened player is seen) -> key of `three_card.open_cost` (H8)
OPEN_KEYS: dict[tuple[bool, bool], str] = {
    (True, False): "seen_vs_blind",
    (True, True): "seen_vs_seen",
    (False, False): "blind_vs_blind",
    (False, True): "blind_vs_seen",
}


def state_word(seen: bool) -> str:
    return "seen" if seen else "blind"


@dataclass(frozen=True, slots=True)
class Bet:
    """A player's current bet: the amount of their last follow and the state it was made in."""

    amount: int
    seen: bool
    player: str | None = None  # None: the ante, posted by the system

    def as_json(self) -> dict[str, Any]:
        return {"player": self.player, "amount": self.amount, "state": state_word(self.seen)}


@dataclass(frozen=True)
class Prices:
    """One room's prices: ante, cap, the four follow tables, the buy and open multiples."""

    ante: int
    cap: int
    follows: Mapping[tuple[bool, bool], tuple[int, ...]]
    buy_multiplier: int
    open_cost: Mapping[tuple[bool, bool], int]
    min_holding: int
    by_own_state: bool = True  # follows: the follower's own amounts (H5), not one column

    @classmethod
    def for_tier(
        cls, config: Compiled | EngineConfig, tier: Compiled | Tier, revision: Revision = CURRENT
    ) -> Prices:
        config = engine_config(config)
        # Read as found: a room or a section the config lacks (None), or a key it lacks,
        # fails here as AttributeError or TypeError, and is the SetupError below.
        room: Any = config.tier(tier["id"]) if isinstance(tier, Mapping) else tier
        try:
            rules: Any = config.three_card
            columns = {
                pair: tuple(sorted(getattr(room, key))) for pair, (key, _) in FOLLOW_TABLES.items()
            }
            if revision.follows_by_own_state:  # H5: a state's amounts are its two columns
                own = {
                    seen: tuple(sorted(set(columns[False, seen] + columns[True, seen])))
                    for seen in (False, True)
                }
                columns = {pair: own[pair[1]] for pair in columns}
            return cls(
                ante=room.ante,
                cap=room.cap,
                follows=columns,
                buy_multiplier=rules.buy_multiplier,
                open_cost={pair: rules.open_cost[key] for pair, key in OPEN_KEYS.items()},
                min_holding=max(room.min_holding or 0, room.ante + room.cap)
                if revision.seat_for_a_follow
                else room.min_holding or 0,
                by_own_state=revision.follows_by_own_state,
            )
        except (KeyError, TypeError, AttributeError) as error:
            raise SetupError(
                "H3", f"the compiled configuration lacks three-card key {error}"
            ) from None

    def minimum(self, previous: Bet, seen: bool) -> Fraction:
        """H5: the least a follow may be after `previous` (never more than the cap)."""
        return _minimum(*_RATIOS[previous.seen, seen], previous.amount, self.cap)

    def minimum_json(self, previous: Bet, seen: bool) -> int | str:
        """`minimum` as events record it: an int when whole, else "5/2"."""
        return _minimum_json(*_RATIOS[previous.seen, seen], previous.amount, self.cap)

    def follow_amounts(self, previous: Bet | None, seen: bool) -> tuple[int, ...]:
        """The amounts a blind or seen player may follow `previous` with (H3, H5); with
        no previous bet (the first bet of the hand), any of their own state's amounts."""
        if previous is None:
            return _first_amounts(self.follows[seen, seen], self.cap)
        return _follow_amounts(
            self.follows[previous.seen, seen],
            *_RATIOS[previous.seen, seen],
            previous.amount,
            self.cap,
        )

    def follow_words(self, previous: Bet | None, seen: bool) -> str:
        """Why the amounts are what they are, for refusals and explanations."""
        if previous is None:
            return (
                f"the first bet of the hand is any of a {state_word(seen)} player's "
                f"amounts {list(self.follows[seen, seen])} up to the cap {self.cap} "
                f"(H5, H3): allowed {list(self.follow_amounts(None, seen))}"
            )
        key, multiple = FOLLOW_TABLES[previous.seen, seen]
        times = {Fraction(1): "", Fraction(2): "2 x ", Fraction(1, 2): "1/2 x "}[multiple]
        who = (
            "the ante (posted blind)"
            if previous.player is None
            else f"{previous.player}'s {state_word(previous.seen)} bet"
        )
        least = self.minimum(previous, seen)
        allowed = self.follow_amounts(previous, seen)
        table = f"{state_word(seen)} player's" if self.by_own_state else key.replace("_", " ")
        return (
            f"a {state_word(seen)} player following {who} of {previous.amount} "
            f"follows at least {f'{times}{previous.amount} = ' if times else ''}{least} "
            f"(H5) and at most the "
            f"cap {self.cap} (H3), with the room's {table} amounts "
            f"{list(self.follows[previous.seen, seen])}: allowed "
            f"{list(allowed) if allowed else 'none'}"
        )

    def buy_price(self, target_bet: Bet) -> int:
        """H7: buy_multiplier x the target's current bet."""
        return self.buy_multiplier * target_bet.amount

    def open_price(self, opener_seen: bool, opened_bet: Bet, opened_seen: bool) -> int:
        """H8: the (opener, opened) multiple x the opened player's current bet."""
        return self.open_cost[opener_seen, opened_seen] * opened_bet.amount

    def open_words(self, opener_seen: bool, opened_bet: Bet, opened_seen: bool) -> str:
        key = OPEN_KEYS[opener_seen, opened_seen]
        return (
            f"{key.replace('_', ' ')}: {self.open_cost[opener_seen, opened_seen]} x "
            f"the opened player's current bet {opened_bet.amount}"
        )


# Pure functions of small hashable values, memoised: a hand asks the same few questions
# again and again (the ante, the chips of the room), and Fraction arithmetic is slow. The
# H5 multiple comes as its numerator and denominator: ints hash in C, a Fraction does not.
_RATIOS = {
    pair: (multiple.numerator, multiple.denominator)
    for pair, (_, multiple) in FOLLOW_TABLES.items()
}


@lru_cache(maxsize=4096)
def _minimum(numerator: int, denominator: int, amount: int, cap: int) -> Fraction:
    return min(Fraction(numerator * amount, denominator), Fraction(cap))


@lru_cache(maxsize=4096)
def _minimum_json(numerator: int, denominator: int, amount: int, cap: int) -> int | str:
    value = _minimum(numerator, denominator, amount, cap)
    return int(value) if value.denominator == 1 else str(value)


@lru_cache(maxsize=256)
def _first_amounts(table: tuple[int, ...], cap: int) -> tuple[int, ...]:
    return tuple(a for a in table if a <= cap)


@lru_cache(maxsize=4096)
def _follow_amounts(
    table: tuple[int, ...], numerator: int, denominator: int, amount: int, cap: int
) -> tuple[int, ...]:
    least = numerator * amount  # compared in whole numbers: a * denominator >= least
    return tuple(a for a in table if a == cap or (a < cap and a * denominator >= least))
