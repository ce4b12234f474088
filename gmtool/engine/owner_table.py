"""Seed 000's owner-ante table: owner, ante, agreement, start, continue (RULES L1-L8, L13, L14).

The table wraps hands: players join, the first is the owner (L1), the owner sets the ante
with chip clicks (L2), the others agree or reject (L3), the owner starts (L5), and after
each hand everyone presses start again within the continue time (L6). Time comes in as
`wait N` inputs; "a random other player becomes owner" is drawn from the table's seed
with the deck's unbiased HMAC draw, so a table is as replayable as a hand.

Decisions where the seed is silent: the ante counts as set as soon as it is above zero
(every click is sent to the others, and a change clears their agreement); a player who
agrees while holding less than the minimum (L7) is removed with the seed's message; when
everybody still seated has pressed start after a hand, the next hand starts by itself.
Leaving a running hand is an escape (L13); a player who has already folded may leave (or
be kicked) without escaping, and the seat frees when the hand ends; a kick between hands
just frees the seat (G2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from gmtool.engine.config import Compiled, EngineConfig, OwnerAnteSpec, engine_config
from gmtool.engine.deck import shuffle
from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import Action, Event, event
from gmtool.engine.hand import CardSource, PlayerAction, Seat
from gmtool.engine.seating import enough_players, first_banker
from gmtool.engine.settlement import Settlement
from gmtool.engine.stud5 import Stud5Hand
from gmtool.engine.stud5_limits import L7_MESSAGE

TABLE_VERBS = ("join", "leave", "ante", "agree", "reject", "start")


class OwnerTable:
    """One owner-ante table and its hands; `apply` takes table and hand actions alike."""

    def __init__(
        self,
        config: Compiled | EngineConfig,
        tier_id: str,
        seed: bytes,
        deal: Callable[[int], CardSource],
    ) -> None:
        self.config = config = engine_config(config)
        self.tier_id = tier_id
        self.seed = seed
        self.deal = deal  # hand number -> card source
        # an owner-table config has [owner_ante] (the compiler's)
        self.owner_ante = cast(OwnerAnteSpec, config.owner_ante)
        self.timeouts = config.timeouts
        self.capacity = config.table.seats
        self.seated: list[str] = []
        self.coins: dict[str, int] = {}
        self.owner: str | None = None
        self.ante = 0
        self.agreed: set[str] = set()
        self.ready: set[str] = set()
        self.phase = "empty"
        self.elapsed = 0
        self.hand: Stud5Hand | None = None
        self.hands_played = 0
        self.last_winner: str | None = None
        self.removed: list[str] = []
        self.leaving: dict[str, tuple[str, str]] = {}  # folded players who left mid-hand
        self.messages: list[str] = []
        self.events: list[Event] = []
        self._draws = 0

    # -- queries for drivers and expectations --------------------------------------------

    @property
    def settlement(self) -> Settlement | None:
        return self.hand.settlement if self.hand else None

    def __getattr__(self, name: str) -> Any:  # to_act, pot, street, legal_actions of the hand
        if name in ("to_act", "pot", "street", "legal_actions") and self.__dict__.get("hand"):
            return getattr(self.__dict__["hand"], name)
        raise AttributeError(name)

    # -- input ----------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        start = len(self.events)
        hand = self.hand if self._playing() else None  # the hand being played
        if hand is not None and action.player in hand.players:
            if action.verb in ("leave", "kick") and hand.players[action.player].folded:
                # folded: nothing left to forfeit
                self._leave_after_hand(action.player, action.verb, action.reason)
                return self.events[start:]
            if action.verb == "leave":
                action = Action("escape", action.player)  # L13: leaving a running hand escapes
        if action.verb in TABLE_VERBS or (action.verb in ("wait", "kick") and hand is None):
            handler = getattr(self, f"_{action.verb}")
            handler(action)
        elif hand is not None:
            self._absorb(hand.apply(action))
            if hand.is_over:
                self._after_hand(hand)
        else:
            raise IllegalAction("S9", action.player, f"no hand is running ({action.verb})")
        return self.events[start:]

    def join(self, name: str, coins: int) -> None:
        """Seat a player (not an action of the hand log's players: the host seats them)."""
        if name in self.seated:
            raise IllegalAction("S8", name, "is already seated")
        if len(self.seated) >= self.capacity:
            raise IllegalAction("S8", name, f"the table has {self.capacity} seats, all taken")
        if self._playing():
            raise IllegalAction("S9", name, "a hand is running; sit down after it")
        self.seated.append(name)
        self.coins[name] = coins
        self._emit("join", player=name, coins=coins)
        if self.owner is None:
            self._new_owner(name, "L1")

    def _join(self, action: PlayerAction) -> None:
        self.join(action.player, action.amount or 0)

    def _playing(self) -> bool:
        return self.hand is not None and not self.hand.is_over and self.phase == "playing"

    def _emit(self, type_: str, **fields: Any) -> None:
        self.events.append(event(type_, **fields))

    def _absorb(self, events: Sequence[Event]) -> None:
        self.events.extend(events)

    def _require(
        self, action: PlayerAction, owner: bool | None, phases: tuple[str, ...], rule: str
    ) -> None:
        if action.player not in self.seated:
            raise IllegalAction("S8", action.player, "is not seated at this table")
        if owner is True and action.player != self.owner:
            raise IllegalAction(rule, action.player, f"only the owner ({self.owner}) may do this")
        if owner is False and action.player == self.owner:
            raise IllegalAction(rule, action.player, "the owner sets the ante, not agrees to it")
        if self.phase not in phases:
            raise IllegalAction(rule, action.player, f"not now (the table is {self.phase})")

    # -- owner and ante (L1, L2, L4) ---------------------------------------------------------

    def _new_owner(self, name: str | None, rule: str) -> None:
        self.owner = name
        self.ante = 0
        self.agreed.clear()
        self.ready.clear()
        self.elapsed = 0
        if name is None:
            self.phase = "empty"
            self._emit("table_dissolved", rule="L1")
            return
        self.phase = "setting_ante"
        self._emit("owner", player=name, rule=rule)

    def _random_other(self, leaving: str) -> str | None:
        others = [p for p in self.seated if p != leaving]
        if not others:
            return None
        self._draws += 1
        return shuffle(others, self.seed + b":owner:" + str(self._draws).encode())[0]

    def _remove(self, name: str, reason: str, rule: str, message: str | None = None) -> None:
        self.seated.remove(name)
        self.agreed.discard(name)
        self.ready.discard(name)
        self.removed.append(name)
        fields: dict[str, Any] = {"player": name, "reason": reason, "rule": rule}
        if message:
            fields["message"] = message
            self.messages.append(message)
        self._emit("removed", **fields)
        if name == self.owner:
            self._new_owner(self._random_other(name), "L1")

    def _ante(self, action: PlayerAction) -> None:
        self._require(action, True, ("setting_ante", "agreeing", "countdown"), "L2")
        bound = self.coins[action.player] // self.owner_ante.max_divisor
        if action.target == "clear":
            new = 0
        elif action.target == "max":
            new = bound
        elif action.amount in self.owner_ante.chips:
            new = self.ante + action.amount
        else:
            raise IllegalAction(
                "L2", action.player, f"chips are {list(self.owner_ante.chips)} and max"
            )
        if new > bound or (action.target == "max" and bound < 1):
            raise IllegalAction(
                "L2",
                action.player,
                f"an ante of {new} exceeds 1/"
                f"{self.owner_ante.max_divisor} of the owner's "
                f"{self.coins[action.player]} coins (at most {bound})",
            )
        self.ante = new
        self.agreed.clear()
        self.phase = "agreeing" if new else "setting_ante"
        self.elapsed = 0
        self._emit("ante_set", player=action.player, ante=new, rule="L2")

    # -- agreement and start (L3, L5, L7, L8) ------------------------------------------------

    def min_holding(self) -> int:
        return self.owner_ante.min_holding_antes * self.ante

    def _agree(self, action: PlayerAction) -> None:
        self._require(action, False, ("agreeing", "countdown"), "L3")
        if self.coins[action.player] < self.min_holding():
            self._remove(action.player, "below_minimum", "L7", L7_MESSAGE)
            return
        self.agreed.add(action.player)
        self._emit("agree", player=action.player, ante=self.ante, rule="L3")
        if len(self.seated) == self.capacity and self.agreed >= set(self.seated) - {self.owner}:
            self.phase = "countdown"
            self.elapsed = 0
            self._emit("countdown", seconds=self.timeouts.start_countdown_s, rule="L5")

    def _reject(self, action: PlayerAction) -> None:
        self._require(action, False, ("agreeing", "countdown"), "L3")
        self._emit("reject", player=action.player, rule="L3")
        self._remove(action.player, "rejected_ante", "L3")

    def _start(self, action: PlayerAction) -> None:
        if self.phase == "continue":
            self._require(action, None, ("continue",), "L6")
            self.ready.add(action.player)
            self._emit("continue", player=action.player, rule="L6")
            self._continue_when_all_ready()
            return
        self._require(action, True, ("agreeing", "countdown"), "L5")
        players = [p for p in self.seated if p == self.owner or p in self.agreed]
        if not enough_players(self.config, len(players)):
            raise IllegalAction(
                "L5",
                action.player,
                "at least 2 players (owner included) must have agreed to the ante",
            )
        self._begin(players)

    def _continue_when_all_ready(self) -> None:
        """L6: once every seated player has pressed start again, the next hand starts."""
        if self.phase == "continue" and self.ready and self.ready >= set(self.seated):
            self._begin(sorted(self.ready, key=self.seated.index))

    def _begin(self, players: list[str]) -> None:
        for name in list(players):
            if self.coins[name] < self.min_holding():
                self._remove(name, "below_minimum", "L7", L7_MESSAGE)
                players.remove(name)
        if not enough_players(self.config, len(players)) or self.owner not in self.seated:
            self.phase = "agreeing" if self.ante else "setting_ante"
            return
        banker = first_banker(self.config, players, self.owner, self.last_winner)  # L8
        self.hands_played += 1
        try:
            self.hand = Stud5Hand(
                self.config,
                self.tier_id,
                [Seat(p, self.coins[p]) for p in players],
                banker,
                self.deal(self.hands_played),
                ante=self.ante,
            )
        except SetupError as error:
            raise IllegalAction(error.rule, None, error.reason) from None
        self.phase = "playing"
        self.ready.clear()
        self._absorb(self.hand.events)

    def _leave_after_hand(self, player: str, verb: str, reason: str | None) -> None:
        """A player who has folded leaves (or is kicked) while the hand runs on: the seat
        is freed when the hand ends, and it is not an escape (L13, L14, G2)."""
        fields: dict[str, Any] = {
            "player": player,
            "rule": "G2" if verb == "kick" else "L14",
            "after_hand": True,
        }
        if reason:
            fields["reason"] = reason
        self._emit(verb, **fields)
        self.leaving[player] = ("kicked", "G2") if verb == "kick" else ("left", "L14")

    def _after_hand(self, hand: Stud5Hand) -> None:
        settlement = cast(Settlement, hand.settlement)  # the hand is over
        for entry in settlement.entries:
            self.coins[entry.player] += entry.delta
        self.last_winner = settlement.winners[0] if settlement.winners else None
        self.phase = "continue"
        self.elapsed = 0
        kicked = {e.get("player") for e in hand.events if e.type == "kick"}
        for escaped in [n for n, p in hand.players.items() if p.escaped]:
            if escaped in self.seated:
                self._remove(
                    escaped, *(("kicked", "G2") if escaped in kicked else ("escaped", "L13"))
                )
        for name, (reason, rule) in self.leaving.items():
            if name in self.seated:
                self._remove(name, reason, rule)
        self.leaving.clear()
        for name in [e.get("player") for e in hand.events if e.type == "below_minimum"]:
            if name in self.seated:
                self._remove(name, "below_minimum", "L7", L7_MESSAGE)

    # -- leaving and time (L4, L5, L6, L14) -------------------------------------------------

    def _leave(self, action: PlayerAction) -> None:
        if action.player not in self.seated:
            raise IllegalAction("S8", action.player, "is not seated at this table")
        self._emit("leave", player=action.player, rule="L14")
        self._remove(action.player, "left", "L14")
        self._continue_when_all_ready()  # the others may all have pressed start already

    def _kick(self, action: PlayerAction) -> None:
        """G2: a kick between hands just frees the seat (in a hand it is an escape)."""
        if action.player not in self.seated:
            raise IllegalAction("G2", action.player, "is not seated at this table")
        fields: dict[str, Any] = {"player": action.player, "rule": "G2"}
        if action.reason:
            fields["reason"] = action.reason
        self._emit("kick", **fields)
        self._remove(action.player, "kicked", "G2")

    def _wait(self, action: Action) -> None:
        if action.amount is None or action.amount < 0:
            raise IllegalAction("G1", None, "time only moves forward (wait SECONDS >= 0)")
        self._emit("wait", amount=action.amount)
        self.elapsed += action.amount
        limits = {
            "setting_ante": ("set_ante_s", "L4"),
            "countdown": ("start_countdown_s", "L5"),
            "continue": ("continue_s", "L6"),
        }
        if self.phase not in limits:
            return
        key, rule = limits[self.phase]
        if self.elapsed < getattr(self.timeouts, key):
            return
        if self.phase == "continue":
            for name in [p for p in self.seated if p not in self.ready]:
                self._remove(name, "timeout", "L6")
            if self.phase == "continue":
                if enough_players(self.config, len(self.ready)):
                    self._begin(sorted(self.ready, key=self.seated.index))
                else:
                    self.phase = "agreeing" if self.ante else "setting_ante"
                    self.agreed = set()
        else:  # the owner's time (L4, L5): there is an owner while the ante is set
            self._remove(cast(str, self.owner), "timeout", rule)
