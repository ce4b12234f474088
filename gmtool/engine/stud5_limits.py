"""How much a stud5 player may put in: the two betting styles (RULES Q1-Q5, L9-L11).

- capped (QQ tiers, `CappedLimits`): bets and raises are multiples of the bet unit and
  may not take a hand total above the street's cumulative cap (Q1, Q4); all-in brings it
  to the hand cap (Q3); check is allowed while nobody has bet.
- owner_ante (seed 000, `OwnerAnteLimits`): the first speaker must open with at least
  `open_min_antes` antes or fold, no check (L9); a raise is the call plus clicks of the
  raise chips (any sum of them, `engine/chips`), at most `raises_per_street` per player
  (L10); no hand total may exceed the smallest stack of the players still in the hand,
  taken at the hand's start (L11, D-7).

Both styles respect D-7's bound, so coins never go negative and no side pot arises. The
shared logic is `Limits`; a style overrides the few answers that differ (`STYLES`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from gmtool.engine.chips import chip_step, chip_sum
from gmtool.engine.config import EngineConfig, OwnerAnteSpec, Tier
from gmtool.engine.errors import SetupError
from gmtool.engine.hand import Legal, PlayerState
from gmtool.engine.versions import CURRENT, Revision


class Stud5Hand(Protocol):
    """What the limits read of a running stud5 hand (engine/stud5.py's `Stud5Hand`)."""

    bound: int  # D-7: the smallest stack still in the hand, at its start
    street: int
    round_max: int
    allin_target: int | None


CHECK, FOLD = Legal("check"), Legal("fold")  # immutable: every legal list may share them
L7_MESSAGE = "您的积分不足，您不能参与此桌的游戏"


class Limits:
    """A hand's betting limits, fixed when it starts."""

    __slots__ = (
        "ante",
        "unit",
        "allin_from_street",
        "allin_to_hand_cap",
        "raises_per_street",
        "open_min",
        "min_holding",
        "hand_cap",
        "opening_is_raise",
        "chips_complete",
    )

    def __init__(
        self,
        ante: int,
        unit: int,
        allin_from_street: int,
        allin_to_hand_cap: bool,
        raises_per_street: int | None,
        open_min: int,
        min_holding: int,
        hand_cap: int | None,
    ) -> None:
        self.ante = ante
        self.unit = unit
        self.allin_from_street = allin_from_street
        self.allin_to_hand_cap = allin_to_hand_cap
        self.raises_per_street = raises_per_street
        self.open_min = open_min
        self.min_holding = min_holding
        self.hand_cap = hand_cap
        self.opening_is_raise = False  # L10: the opening counts as the opener's raise
        # L10: every multiple of the chips' step is a sum of them (the least chip is the
        # step), so bounds and step alone decide an amount
        self.chips_complete = True

    # -- what a style answers --------------------------------------------------------------

    may_check = True  # S13: with no bet yet, a player may check (not the L9 opener)

    def max_total(self, hand: Stud5Hand) -> int:
        """The most a player's hand total may reach on this street (D-7 and the style's)."""
        return hand.bound

    def bound_words(self, hand: Stud5Hand) -> str:
        return f"smallest stack {hand.bound}, D-7"

    def amount_rule(self, verb: str, why: str) -> str:
        """The rule an amount breaks: `why` is "small", "large" or "step"."""
        return "Q4"

    def no_room_rule(self) -> str:
        return "Q4"

    def _bet(self, room: int) -> Legal | None:
        """The bet entry when nobody has bet and `room` is left below the bound: a bet
        unit or more (Q4)."""
        low = self.unit
        # the largest low + k x unit that fits in `room` (inline: the legal list of every turn)
        return Legal("bet", low, low + (room - low) // low * low, low) if room >= low > 0 else None

    def _raise(self, facing: int, room: int) -> Legal | None:
        """The raise entry when `facing` is owed and `room` is left below the bound: the
        call plus a bet unit or more (Q4)."""
        unit = self.unit
        low = facing + unit
        return Legal("raise", low, low + (room - low) // unit * unit, unit) if room >= low else None

    def below_minimum_fields(self) -> dict[str, Any]:
        """The rule (and message) of a player left below the minimum after a hand."""
        return {"rule": "S21"}

    @property
    def training_stack(self) -> int:
        """The virtual stack of a training-room player (S22): enough for any hand."""
        return self.hand_cap if self.hand_cap is not None else self.min_holding

    # -- shared ------------------------------------------------------------------------------

    def allin_total(self, hand: Stud5Hand) -> int:
        bound = hand.bound
        return min(bound, self.hand_cap) if self.allin_to_hand_cap and self.hand_cap else bound

    def legal(self, hand: Stud5Hand, player: PlayerState) -> list[Legal]:
        total = player.total
        if hand.allin_target is not None:  # S15: after an all-in, only call or fold
            owed = hand.allin_target - total
            return [Legal("call", owed, owed), FOLD] if owed > 0 else [FOLD]
        room = self.max_total(hand) - total
        facing = hand.round_max - total
        if facing == 0:
            # S13: with no bet a player may check; L9's opener only where nobody can bet any
            # more (S14: the street is still played; docs/decisions.md)
            legal = [CHECK] if self.may_check or room <= 0 else []
            entry = self._bet(room)
            if entry is not None:
                legal.append(entry)
        else:
            legal = [Legal("call", facing, facing)]
            if not self.raises_per_street or player.raises < self.raises_per_street:
                entry = self._raise(facing, room)
                if entry is not None:
                    legal.append(entry)
        legal.append(FOLD)
        if hand.street >= self.allin_from_street:
            owed = self.allin_total(hand) - total
            if owed > 0:
                legal.append(Legal("allin", owed, owed))
        return legal

    def entry(self, hand: Stud5Hand, player: PlayerState, verb: str) -> Legal | None:
        """The entry of `legal` for `verb` alone, or None when `verb` is not allowed: what
        replay checks a recorded action against (it builds one entry, not the whole list;
        a property test holds the two equal for every verb in every state)."""
        if verb == "fold":
            return FOLD
        total = player.total
        if hand.allin_target is not None:  # S15: after an all-in, only call or fold
            owed = hand.allin_target - total
            return Legal("call", owed, owed) if verb == "call" and owed > 0 else None
        if verb == "allin":
            owed = self.allin_total(hand) - total
            return (
                Legal("allin", owed, owed)
                if hand.street >= self.allin_from_street and owed > 0
                else None
            )
        facing = hand.round_max - total
        if verb == "call":
            return Legal("call", facing, facing) if facing else None
        room = self.max_total(hand) - total
        if verb == "check":
            return CHECK if facing == 0 and (self.may_check or room <= 0) else None
        if verb == "bet" and facing == 0:
            return self._bet(room)
        if verb == "raise" and facing and self._may_raise(player):
            return self._raise(facing, room)
        return None

    def _may_raise(self, player: PlayerState) -> bool:
        return not self.raises_per_street or player.raises < self.raises_per_street

    def why_not(self, hand: Stud5Hand, player: PlayerState, verb: str) -> tuple[str, str, str]:
        """(rule, player, reason) for a verb that is not among the legal actions."""
        name = player.name
        if hand.allin_target is not None:
            return "S15", name, "after an all-in the others may only call or fold"
        facing = hand.round_max - player.total
        if verb == "allin":
            if hand.street < self.allin_from_street:
                return (
                    "S15",
                    name,
                    (
                        f"all-in is allowed only from street {self.allin_from_street}"
                        f" ({self.allin_from_street} cards in hand); this is "
                        f"street {hand.street}"
                    ),
                )
            return "S15", name, "already at the all-in amount"
        if verb in ("check", "call") and not self.may_check and facing == 0:
            return (
                "L9",
                name,
                (f"the opener must bet at least {self.open_min} or fold; {verb} is not allowed"),
            )
        if verb == "check":
            return "S13", name, f"there is a bet of {facing} to call; check is not allowed"
        if verb == "call":
            return "S13", name, "there is no bet to call"
        if verb == "bet" and facing > 0:
            return "S13", name, "a bet already exists: call, raise or fold"
        if verb == "raise" and facing == 0:
            return "S13", name, "there is no bet to raise: bet instead"
        if verb == "raise" and not self._may_raise(player):
            return (
                "L10",
                name,
                f"each player may raise at most {self.raises_per_street} time(s) per street",
            )
        return self.no_room_rule(), name, self.no_room_words(hand)

    def no_room_words(self, hand: Stud5Hand) -> str:
        return f"the hand total already reaches the {self.bound_words(hand)}"


class CappedLimits(Limits):
    """QQ-style tiers: street caps and a hand cap (Q1-Q4)."""

    __slots__ = ("street_caps",)

    def __init__(
        self, config: EngineConfig, tier: Tier, ante: int | None, revision: Revision
    ) -> None:
        betting = config.betting
        # what a capped tier and stud5 betting always have (the compiler fills them in)
        unit: int = tier.bet_unit  # type: ignore[assignment]
        caps: tuple[int, ...] = tier.street_caps  # type: ignore[assignment]
        super().__init__(
            tier.ante,  # type: ignore[arg-type]
            unit,
            betting.allin_from_street,  # type: ignore[arg-type]
            betting.allin_amount == "hand_cap",
            betting.raises_per_street,
            unit,
            tier.min_holding,
            tier.hand_cap,
        )
        self.street_caps = caps

    def max_total(self, hand: Stud5Hand) -> int:
        cap = self.street_caps[hand.street - 2]
        return cap if cap < hand.bound else hand.bound

    def bound_words(self, hand: Stud5Hand) -> str:
        return f"street-{hand.street} cap {self.street_caps[hand.street - 2]}, bet unit {self.unit}"


class OwnerAnteLimits(Limits):
    """Seed 000's owner table: an opener's minimum, raise chips, the smallest stack (L9-L11)."""

    __slots__ = ("raise_chips", "_step", "_least", "_open_low")
    may_check = False  # L9: the opener bets or folds
    raise_chips: tuple[int, ...]

    def __init__(
        self, config: EngineConfig, tier: Tier, ante: int | None, revision: Revision
    ) -> None:
        if ante is None or ante < 1:
            raise SetupError("L2", "the owner has not set an ante")
        betting = config.betting
        # what an owner-ante config always has (the compiler fills them in)
        owner_ante: OwnerAnteSpec = config.owner_ante  # type: ignore[assignment]
        raise_chips: tuple[int, ...] = betting.raise_chips  # type: ignore[assignment]
        open_min: int = betting.open_min_antes  # type: ignore[assignment]
        super().__init__(
            ante,
            1,
            betting.allin_from_street,  # type: ignore[arg-type]
            betting.allin_amount == "hand_cap",
            betting.raises_per_street,
            open_min * ante,
            owner_ante.min_holding_antes * ante,
            None,
        )
        self.opening_is_raise = revision.opening_is_raise
        if not revision.raise_chips:
            self.raise_chips = ()
            return
        # L10: seed 000 counts its chips in antes; a table plays many hands at one ante
        self.raise_chips, self._step, self._least, self._open_low = _chips_at(
            tuple(raise_chips), ante if betting.raise_chip_unit == "ante" else 1, self.open_min
        )
        self.chips_complete = self._least == self._step

    def _bet(self, room: int) -> Legal | None:
        """L9/L10: the opening, made with the raise chips: a sum of them of at least the
        opening minimum. Should the room below the bound (D-7) be smaller than that, the
        opener may put in exactly what is left. Engines before 4 took any amount."""
        chips = self.raise_chips
        if not (self.opening_is_raise and chips):  # engines before 4: any whole amount
            low = min(self.open_min, room)
            return Legal("bet", low, _top(low, room, 1), 1) if room >= low > 0 else None
        if room <= 0:
            return None
        low, step = self._open_low, self._step
        if low > room:
            return Legal("bet", room, room)
        top = (
            low + (room - low) // step * step
            if self.chips_complete
            else _chip_top(low, room, step, chips)
        )
        return Legal("bet", low, top, step, (), (), chips)  # (positional: a hand builds many)

    def amount_rule(self, verb: str, why: str) -> str:
        if why == "large":
            return "L11"
        return "L9" if verb == "bet" and why == "small" else "L10"

    def no_room_rule(self) -> str:
        return "L11"

    def no_room_words(self, hand: Stud5Hand) -> str:
        return f"no room left below the {self.bound_words(hand)}"

    def _raise(self, facing: int, room: int) -> Legal | None:
        """The call plus clicks of the raise chips (L10); engines before version 3 took
        any whole number of chips."""
        chips = self.raise_chips
        if not chips:
            return super()._raise(facing, room)
        least, step = self._least, self._step
        if room < facing + least:
            return None
        room -= facing
        top = (
            least + (room - least) // step * step
            if self.chips_complete
            else _chip_top(least, room, step, chips)
        )
        return Legal("raise", facing + least, facing + top, step, (), (), chips, facing)

    def below_minimum_fields(self) -> dict[str, Any]:
        return {"rule": "L7", "message": L7_MESSAGE}


STYLES: dict[str, Callable[[EngineConfig, Tier, int | None, Revision], Limits]] = {
    "capped": CappedLimits,
    "owner_ante": OwnerAnteLimits,
}


def limits_for(
    config: EngineConfig, tier: Tier, ante: int | None, revision: Revision = CURRENT
) -> Limits:
    """A hand's limits under the config's betting style. Limits never change once made,
    so the hands of a room share them (a table plays many hands at one ante): kept by the
    typed config itself (engine_config gives one per compiled config)."""
    key = (id(config), tier.id, ante, revision.version)
    kept = _LIMITS.get(key)
    if kept is not None and kept[0] is config:
        return kept[1]
    limits = STYLES[config.betting.style](config, tier, ante, revision)  # type: ignore[index]
    if len(_LIMITS) >= 1024:
        _LIMITS.clear()
    _LIMITS[key] = (config, limits)  # (the config is kept, so its id stays its own)
    return limits


_LIMITS: dict[tuple[int, str, int | None, str], tuple[EngineConfig, Limits]] = {}


@lru_cache(maxsize=256)
def _chips_at(
    chips: tuple[int, ...], unit: int, open_min: int
) -> tuple[tuple[int, ...], int, int, int]:
    """The raise chips in coins at `unit` coins a chip unit, their step (greatest common
    divisor), the least chip and the least opening of at least `open_min` made of them."""
    coins = tuple(chip * unit for chip in chips)
    step = chip_step(coins)
    low = -(-open_min // step) * step
    while not chip_sum(low, coins):
        low += step  # a few steps at most: past the Frobenius number every sum exists
    return coins, step, min(coins), low


def _chip_top(low: int, room: int, step: int, chips: tuple[int, ...]) -> int:
    """The largest sum of `chips` from `low` (itself a sum) up to `room`."""
    top = low + (room - low) // step * step
    while top > low and not chip_sum(top, chips):
        top -= step  # a few steps at most: past the Frobenius number every sum exists
    return top


def _top(low: int, room: int, step: int) -> int:
    """The largest amount low + k * step that fits in `room`."""
    return low + (room - low) // step * step
