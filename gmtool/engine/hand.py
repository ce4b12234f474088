"""What every hand shares, whatever the game: seats, turns, time, connections, escapes.

A hand is a pure function of (compiled config, seats with coins, cards, actions). Each
input goes through `apply`, which checks it completely (raising `IllegalAction` naming
the rule, with nothing changed) before it changes anything, and returns the events it
caused. Time is an input too: the host sends `wait N` (N seconds passed) or `timeout`,
and connection news as `disconnect` / `reconnect`; the engine never reads a clock.

Time rules (RULES S17, S18, G1): the player to act has `action_s` seconds; past them the
system folds (passes) for them. A disconnected player's reconnect window
(`reconnect_min` minutes) runs from the moment of the disconnect, whoever is to act;
while that player is to act their action clock is paused and the hand waits for them.
More than n minutes after the disconnect without a reconnect, the player has escaped
(S19) at that moment, on their turn or not. `wait N` is N seconds of time: within it,
clocks run out in the order they do, and the seconds after a timeout run on the next
player's fresh clock. (Engines before 4 counted the window from the disconnected
player's turn and dropped the seconds past a timeout: `_wait_before_4`.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, NamedTuple, Protocol

from gmtool.engine.cards import Card
from gmtool.engine.chips import chip_sum
from gmtool.engine.config import Compiled, EngineConfig, engine_config
from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import AMOUNT_VERBS, Action, Event, new_event
from gmtool.engine.settlement import Entry, Result, Settlement
from gmtool.engine.versions import ENGINE_VERSION, revision


class Seat(NamedTuple):
    """A player sitting down for a hand, with the coins they hold at its start."""

    name: str
    coins: int


class Legal(NamedTuple):
    """One action the player to act may take, with the bounds of its amount (a named
    tuple: immutable, and cheap, as the legal list is rebuilt after every action)."""

    verb: str
    min_amount: int | None = None
    max_amount: int | None = None
    step: int = 1
    targets: tuple[str, ...] = ()
    amounts: tuple[int, ...] = ()  # the only amounts allowed, when not every step is (H5)
    chips: tuple[int, ...] = ()  # the part above `base` is a sum of these (L10 raise chips)
    base: int = 0  # the call a chip raise starts from

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verb": self.verb}
        if self.min_amount is not None:
            out.update(min=self.min_amount, max=self.max_amount, step=self.step)
        if self.targets:
            out["targets"] = list(self.targets)
        if self.amounts:
            out["amounts"] = list(self.amounts)
        if self.chips:
            out.update(call=self.base, chips=list(self.chips))
        return out

    def allows(self, amount: int) -> bool:
        """Whether `amount` is one this entry allows (bounds, step, amounts, chips)."""
        if self.amounts:
            return amount in self.amounts
        # an entry with a minimum has a maximum (every Legal is made with both or neither)
        if (
            self.min_amount is None
            or not self.min_amount <= amount <= self.max_amount  # type: ignore[operator]
            or (amount - self.min_amount) % self.step
        ):
            return False
        return not self.chips or chip_sum(amount - self.base, self.chips)

    def actions(self, player: str, limit: int | None = None) -> list[Action]:
        """The concrete actions this entry allows `player`, smallest amounts first; at most
        `limit` of them (an owner-ante bet may range over hundreds of thousands)."""
        amounts: Iterable[int]
        if self.targets:
            return [Action(self.verb, player, target=target) for target in self.targets]
        if self.amounts:
            amounts = self.amounts[:limit] if limit else self.amounts
            return [Action(self.verb, player, amount) for amount in amounts]
        if self.min_amount is not None and self.verb in AMOUNT_VERBS:
            amounts = range(
                self.min_amount,
                self.max_amount + 1,  # type: ignore[operator]
                self.step,
            )
            if self.chips:
                amounts = (a for a in amounts if chip_sum(a - self.base, self.chips))
            if limit:
                amounts = islice(amounts, limit)
            return [Action(self.verb, player, amount) for amount in amounts]
        return [Action(self.verb, player)]


@dataclass(slots=True)
class PlayerState:
    """A seated player's state within one hand."""

    name: str
    coins: int  # at the start of the hand (for training rooms: the virtual stack)
    total: int = 0  # chips put into the pot this hand
    cards: list[Card] = field(default_factory=list)
    showing: int = 0  # bitmask of the face-up cards (stud5), the key of showing-card lookups
    folded: bool = False
    connected: bool = True
    escaped: bool = False
    acted: bool = False
    raises: int = 0
    result: Result | None = None
    action_elapsed: int = 0
    window_elapsed: int = 0


class CardSource(Protocol):
    def draw(self, player: str) -> Card: ...

    def deal(self, players: Sequence[str]) -> list[Card]:
        """One card for each of `players`, in that order (a round of dealing)."""


class DeckSource:
    """Cards from a shuffled deck, in dealing order."""

    def __init__(self, cards: Sequence[Card]) -> None:
        self._cards = list(cards)
        self._next = 0

    def draw(self, player: str) -> Card:
        if self._next >= len(self._cards):
            raise SetupError("S1", "the deck ran out of cards")
        card = self._cards[self._next]
        self._next += 1
        return card

    def deal(self, players: Sequence[str]) -> list[Card]:
        start, end = self._next, self._next + len(players)
        if end > len(self._cards):
            raise SetupError("S1", "the deck ran out of cards")
        self._next = end
        return self._cards[start:end]


class FixedSource:
    """Cards given per player, in the order each receives them (scenarios, disputes)."""

    def __init__(self, cards: Mapping[str, Sequence[Card]]) -> None:
        self._cards = {player: list(hand) for player, hand in cards.items()}
        seen: set[Card] = set()
        for player, hand in self._cards.items():
            for card in hand:
                if card in seen:
                    raise SetupError("S1", f"card {card} is dealt twice ({player})")
                seen.add(card)

    def draw(self, player: str) -> Card:
        hand = self._cards.get(player)
        if not hand:
            raise SetupError("S10", f"no card left to deal to {player}")
        return hand.pop(0)

    def deal(self, players: Sequence[str]) -> list[Card]:
        return [self.draw(player) for player in players]


class PlayerAction(Protocol):
    """An action as `verify_<verb>` and `_do_<verb>` get it for every verb but `wait`: `apply`
    and `can` pass them only an action whose player is seated (S8), so it names one."""

    @property
    def verb(self) -> str: ...
    @property
    def player(self) -> str: ...
    @property
    def amount(self) -> int | None: ...
    @property
    def target(self) -> str | None: ...
    @property
    def reason(self) -> str | None: ...


class AmountAction(PlayerAction, Protocol):
    """A bet, raise or follow as its `_do_<verb>` gets it: `verify_<verb>` has checked the
    amount, so there is one."""

    @property
    def amount(self) -> int: ...


class WaitAction(Protocol):
    """`wait N` as `_do_wait` gets it: `verify_wait` has checked N, a number of seconds."""

    @property
    def amount(self) -> int: ...


class Hand(ABC):
    """The shared machinery of a hand; games add their betting and showdown."""

    game = ""
    seat_rule = "S8"  # the rule an unseated player's action breaks
    verb_rule = "S13"  # the rule an action word of another game breaks
    below_minimum_rule = "S21"  # the rule of a player left below the room's minimum
    # verb -> (verify_<verb>, _do_<verb>) of the class, found once when the class is made
    _inputs: dict[str, tuple[Callable[..., None], Callable[..., None]]] = {}
    training: bool  # a training room's hand (S22): set by each game when it starts

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._inputs = {
            name[4:]: (getattr(cls, "verify_" + name[4:]), getattr(cls, name))
            for name in dir(cls)
            if name.startswith("_do_")
        }

    def __init__(
        self,
        config: Compiled | EngineConfig,
        seats: Sequence[Seat],
        source: CardSource,
        engine: str = ENGINE_VERSION,
    ) -> None:
        self.revision = revision(engine)  # the rule fixes in force (engine/versions)
        self.config = config = engine_config(config)
        self.timeouts = config.timeouts
        self.escape_policy = config.betting.escape_policy
        names = [seat.name for seat in seats]
        if len(set(names)) != len(names):
            raise SetupError("S8", f"a player is seated twice: {names}")
        if not 2 <= len(seats) <= config.table.seats:
            raise SetupError(
                self.seat_rule, f"{len(seats)} players; a table seats 2 to {config.table.seats}"
            )
        self.order = names  # counterclockwise seat order
        # every seat's view of the table: itself, then the others counterclockwise
        twice, count = names + names, len(names)
        self._round_from = {name: twice[i : i + count] for i, name in enumerate(names)}
        self.players = {seat.name: PlayerState(seat.name, seat.coins) for seat in seats}
        self.source = source
        self.events: list[Event] = []
        self.to_act: str | None = None
        self.settlement: Settlement | None = None
        self.pot = 0  # every chip put in this hand: the sum of the players' totals
        self._live: list[PlayerState] | None = None

    # -- queries ----------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.settlement is not None

    def live(self) -> list[PlayerState]:
        """Players still in the hand, in seat order (kept until someone folds: do not
        modify the list)."""
        if self._live is None:
            # (`players` is keyed in seat order: it is made from the seats, as `order` is)
            self._live = [player for player in self.players.values() if not player.folded]
        return self._live

    def put_in(self, player: PlayerState, amount: int) -> None:
        """Move `amount` of `player`'s chips into the pot. (Stud5's antes and `_put_in`, and
        three-card's antes, do these two additions inline: they run at every bet.)"""
        player.total += amount
        self.pot += amount

    def mark_folded(self, player: PlayerState) -> None:
        """Take a player out of the hand (the one place `folded` is set)."""
        player.folded = True
        self._live = None

    def next_live(self, name: str) -> str:
        """The next player counterclockwise from `name` who has not folded."""
        players = self.players
        for candidate in self._round_from[name][1:]:
            if not players[candidate].folded:
                return candidate
        return name

    def from_player(self, name: str) -> list[str]:
        """Live players counterclockwise starting at `name`."""
        players = self.players
        return [p for p in self._round_from[name] if not players[p].folded]

    def face_up(self, name: str) -> list[str]:
        """The cards of `name` that lie face up (none, unless the game deals some so)."""
        return []

    def has_looked(self, name: str) -> bool | None:
        """Whether `name` has looked at their cards (three-card H4); None where every
        player always sees their own cards (stud5)."""
        return None

    @abstractmethod
    def legal_actions(self) -> list[Legal]:
        """What the player to act may do now, with amount bounds."""

    # -- input ------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Check `action` completely, then perform it; returns the events it caused."""
        if self.settlement is not None:
            raise IllegalAction("S20", action.player, "the hand is already over")
        pair = self._inputs.get(action.verb)
        if pair is None:
            raise IllegalAction(
                self.verb_rule, action.player, f"{action.verb!r} is not an action of {self.game}"
            )
        if action.player not in self.players and action.verb != "wait":
            raise IllegalAction(
                self.seat_rule,
                action.player,
                "is not seated at this table"
                if action.player
                else f"{action.verb!r} needs a player",
            )
        verify, handler = pair
        verify(self, action)
        start = len(self.events)
        handler(self, action)
        return self.events[start:]

    def can(self, action: Action) -> bool:
        """Whether `action` would be accepted now (for menus and bots)."""
        pair = self._inputs.get(action.verb)
        if (
            pair is None
            or self.is_over
            or (action.verb != "wait" and action.player not in self.players)
        ):
            return False
        try:
            pair[0](self, action)
        except IllegalAction:
            return False
        return True

    def emit(self, type_: str, **fields: Any) -> None:
        self.events.append(new_event(Event, (type_, fields)))  # Event(type_, fields), sooner

    def _require_turn(self, action: PlayerAction, rule: str = "S12") -> PlayerState:
        if action.player != self.to_act:
            raise IllegalAction(rule, action.player, f"it is {self.to_act}'s turn, not theirs")
        return self.players[action.player]

    def _require_live(self, action: PlayerAction, rule: str) -> PlayerState:
        player = self.players[action.player]
        if player.folded:
            raise IllegalAction(rule, action.player, "has already left this hand")
        return player

    # -- time and connections (S17, S18) -----------------------------------------

    def verify_wait(self, action: Action) -> None:
        if action.amount is None or action.amount < 0:
            raise IllegalAction("G1", None, "time only moves forward (wait SECONDS >= 0)")

    def _do_wait(self, action: WaitAction) -> None:
        self.events.append(new_event(Event, ("wait", {"amount": action.amount})))  # emit, inline
        if not self.revision.window_from_disconnect:
            self._wait_before_4(action.amount)
            return
        left, window = action.amount, self.timeouts.reconnect_min * 60
        while left > 0 and self.settlement is None:
            # the seconds until the next clock runs out: the action clock of a connected
            # player to act (at its limit), or a window (one second past n minutes)
            turn = self.players[self.to_act] if self.to_act is not None else None
            clocked = turn if turn is not None and turn.connected else None
            away = [p for p in self.live() if not p.connected]
            step = left
            if clocked is not None:
                step = min(step, max(self.timeouts.action_s - clocked.action_elapsed, 1))
            for player in away:
                step = min(step, max(window + 1 - player.window_elapsed, 1))
            left -= step
            if clocked is not None:
                clocked.action_elapsed += step
            for player in away:
                player.window_elapsed += step
            # S17 first: a clock runs out at its limit, a window only past n minutes (S18)
            if clocked is not None and clocked.action_elapsed >= self.timeouts.action_s:
                self.emit("timeout", player=clocked.name, cause="clock", rule="S17")
                self._timeout_fold(clocked)
            for player in away:
                if self.settlement is None and not player.folded and player.window_elapsed > window:
                    self.emit("window_expired", player=player.name, cause="clock", rule="S18")
                    self._escape(player, Result.DISCONNECT, "reconnect_window")

    def _wait_before_4(self, seconds: int) -> None:
        """Engines before 4: only the player to act was waited for, their window counted
        from their turn (RULES S18 before its correction of 2026-12-02)."""
        if self.to_act is None:
            return
        player = self.players[self.to_act]
        if player.connected:
            player.action_elapsed += seconds
            if player.action_elapsed >= self.timeouts.action_s:
                self.emit("timeout", player=player.name, cause="clock", rule="S17")
                self._timeout_fold(player)
        else:
            player.window_elapsed += seconds
            window = self.timeouts.reconnect_min * 60
            # S18: a reconnect exactly n minutes after the disconnect is in time; only
            # more than n minutes is an escape (engines before 3 closed at n minutes).
            if player.window_elapsed > window or (
                player.window_elapsed == window and not self.revision.reconnect_in_time_at_window
            ):
                self.emit("window_expired", player=player.name, cause="clock", rule="S18")
                self._escape(player, Result.DISCONNECT, "reconnect_window")

    def verify_timeout(self, action: PlayerAction) -> None:
        player = self._require_turn(action, "S17")
        if not player.connected:
            raise IllegalAction(
                "S18",
                action.player,
                "is disconnected: the action clock is paused while the reconnect window runs",
            )

    def _do_timeout(self, action: PlayerAction) -> None:
        self.emit("timeout", player=action.player, rule="S17")
        self._timeout_fold(self.players[action.player])

    def verify_disconnect(self, action: PlayerAction) -> None:
        player = self._require_live(action, "S18")
        if not player.connected:
            raise IllegalAction("S18", action.player, "is already disconnected")

    def _do_disconnect(self, action: PlayerAction) -> None:
        player = self.players[action.player]
        player.connected = False
        if self.revision.window_from_disconnect:
            player.window_elapsed = 0  # S18: the window runs from this moment
        self.emit("disconnect", player=player.name)

    def verify_reconnect(self, action: PlayerAction) -> None:
        if self.players[action.player].connected:
            raise IllegalAction("S18", action.player, "is not disconnected")

    def _do_reconnect(self, action: PlayerAction) -> None:
        player = self.players[action.player]
        player.connected = True
        self.emit("reconnect", player=player.name, waited_s=player.window_elapsed)

    def verify_escape(self, action: PlayerAction) -> None:
        self._require_live(action, "S19")

    def _do_escape(self, action: PlayerAction) -> None:
        self.emit("escape", player=action.player, rule="S19")
        self._escape(self.players[action.player], Result.ESCAPE, "left")

    def verify_kick(self, action: PlayerAction) -> None:
        self._require_live(action, "G2")

    def _do_kick(self, action: PlayerAction) -> None:
        fields = {"player": action.player, "rule": "G2"}
        if action.reason:
            fields["reason"] = action.reason
        self.emit("kick", **fields)
        self._escape(self.players[action.player], Result.ESCAPE, "kick")

    def _start_turn(self, name: str | None) -> None:
        self.to_act = name
        if name is not None:
            player = self.players[name]
            player.action_elapsed = 0
            if not self.revision.window_from_disconnect:
                player.window_elapsed = 0  # engines before 4 counted the window from the turn

    # -- hooks each game implements -----------------------------------------------

    @abstractmethod
    def _timeout_fold(self, player: PlayerState) -> None:
        """The system's answer to a timeout (S17): stud5 folds, three-card passes."""

    @abstractmethod
    def _escape_fold(self, player: PlayerState, cause: str) -> None:
        """An escape under policy "fold" (S19): the escapee is out, the others play on."""

    @abstractmethod
    def _escape_winner(self, escapee: PlayerState) -> str:
        """Who wins an escape under "forfeit_to_banker": the banker, unless the banker is
        the escapee (D-1) or has folded (D-10); then the game says who takes the place."""

    def _escape_charge(self, escapee: PlayerState) -> int:
        """D-9: the pot on the table, at most the coins the escapee held."""
        return min(self.pot, escapee.coins)

    def _ended_fields(self, winner: str) -> dict[str, Any]:
        """Fields a game adds to `hand_ended` (three-card names the next dealer)."""
        return {}

    def _minimum_after_hand(self) -> tuple[int, dict[str, Any]]:
        """The coins a player must still hold after the hand, and the fields of a
        `below_minimum` event (its rule, a message), S21."""
        return 0, {"rule": self.below_minimum_rule}

    # -- shared endings ------------------------------------------------------------

    def _escape(self, player: PlayerState, result: Result, cause: str) -> None:
        """An escape under the profile's policy (S19, S18 past the window, G2 kicks)."""
        player.escaped = True
        player.result = result
        if self.escape_policy == "fold":
            self._escape_fold(player, cause)
            return
        banker = self._escape_winner(player)
        charge = self._escape_charge(player)
        escapee = player.name
        entries = [
            Entry(
                name,
                -charge if name == escapee else charge if name == banker else 0,
                "escape" if name == escapee else "escape_win" if name == banker else "returned",
            )
            for name in self.order
        ]
        results = {
            name: result if name == escapee else Result.WIN if name == banker else Result.DRAW
            for name in self.order
        }
        self.emit(
            "hand_ended",
            reason="escape",
            escaped=escapee,
            winners=[banker],
            pot=self.pot,
            charge=charge,
            rule="S19",
            **self._ended_fields(banker),
        )
        self._finish(entries, results, (banker,), "escape")

    def _finish(
        self,
        entries: list[Entry],
        results: Mapping[str, Result],
        winners: tuple[str, ...],
        reason: str,
    ) -> None:
        """Settle the hand: coins move (or, in a training room, only scores), then the
        players left below the room's minimum are named (S20, S21, S22)."""
        score = {}
        if self.training:
            entries = [Entry(e.player, 0, "training") for e in entries]
            scoring = self.config.scoring
            score = {
                name: scoring.of(str(result)) if scoring else 0 for name, result in results.items()
            }
        settlement = Settlement(tuple(entries), results, score, winners, reason)
        self._settle(settlement, self._below_minimum(settlement))

    def _below_minimum(self, settlement: Settlement) -> list[Event]:
        """S21/L7: players whose coins after the hand are below the minimum holding."""
        if self.training:
            return []
        need, fields = self._minimum_after_hand()
        out = []
        for entry in settlement.entries:  # one per player, in seat order
            after = self.players[entry.player].coins + entry.delta
            if after < need:
                out.append(
                    Event(
                        "below_minimum",
                        {"player": entry.player, "coins": after, "min_holding": need, **fields},
                    )
                )
        return out

    def _settle(self, settlement: Settlement, extra: Iterable[Event] = ()) -> None:
        self.to_act = None
        self.settlement = settlement
        self.events.append(new_event(Event, ("settlement", settlement.as_json())))
        self.events.extend(extra)
