"""Five-card stud showhand (RULES S8-S23, Q1-Q6, L9-L13), both betting styles.

The two styles of the seeds are not branches of copied code: `Limits` (in stud5_limits,
one class per style) answers "how much may this player put in now" for the capped QQ
tiers and for the owner-ante table alike, and this module runs the hand: antes, deals,
first speakers, betting rounds, all-in, early end, showdown and settlement; escapes and
the ending that all games share are the base hand's (engine/hand.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gmtool.engine.chips import chip_sum
from gmtool.engine.config import Compiled, EngineConfig
from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import Event, new_event
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import (
    AmountAction,
    CardSource,
    Hand,
    Legal,
    PlayerAction,
    PlayerState,
    Seat,
)
from gmtool.engine.rankings import Ranking
from gmtool.engine.seating import check_holdings, open_tier
from gmtool.engine.settlement import Entry, Result, split_pot
from gmtool.engine.stud5_limits import limits_for
from gmtool.engine.versions import ENGINE_VERSION

if TYPE_CHECKING:
    from gmtool.engine.ranking import Stud5Ranking

LAST_STREET = 5


class Stud5Hand(Hand):
    """One hand of five-card stud under a compiled stud5 configuration."""

    game = "stud5"

    def __init__(
        self,
        config: Compiled | EngineConfig,
        tier_id: str,
        seats: Sequence[Seat],
        banker: str,
        source: CardSource,
        ante: int | None = None,
        ranking: Ranking | None = None,
        engine: str = ENGINE_VERSION,
    ) -> None:
        super().__init__(config, seats, source, engine)
        config = self.config
        self.tier = open_tier(config, tier_id)
        if banker not in self.players:
            raise SetupError("S11", f"banker {banker!r} is not seated")
        # the ranking of a stud5 config: a Stud5Ranking (no call to say so: per hand)
        self.ranking: Stud5Ranking = ranking or ranking_for(config)  # type: ignore[assignment]
        ranking = self.ranking
        # S7: showing-card ties follow the profile's policy (engines before 4: one reading)
        self.showing = (
            ranking.showing if self.revision.showing_by_policy else ranking.showing_before_4
        )
        self.limits = limits_for(config, self.tier, ante, self.revision)
        self.training = not self.tier.coins
        if not self.training:
            self.bound = min([p.coins for p in self.players.values()])  # D-7, kept up to date
            if self.bound < self.limits.min_holding:  # someone cannot sit: name them
                check_holdings(
                    config,
                    tier_id,
                    {p.name: p.coins for p in self.players.values()},
                    need=self.limits.min_holding,
                )  # = seating.seat_need (Q1, L7)
        else:  # S22: virtual stacks; no coins move
            for player in self.players.values():
                player.coins = self.limits.training_stack
            self.bound = self.limits.training_stack  # D-7, kept up to date
        self.banker = banker
        self._legal_memo: tuple[int, list[Legal]] = (-1, [])
        self.street = 1
        self.round_max = 0
        self.allin_target: int | None = None
        started = {
            "game": "stud5",
            "engine": self.revision.version,
            "config_id": config.config_id,
            "tier": tier_id,
            "ante": self.limits.ante,
            "banker": banker,
            "training": self.training,
            "seats": [{"player": s.name, "coins": s.coins} for s in seats],
        }
        self.events.append(new_event(Event, ("hand_started", started)))  # emit, inline
        ante, events = self.limits.ante, self.events
        for player in self.players.values():
            player.total += ante  # put_in, inline (a few per hand)
            self.pot += ante
            events.append(
                new_event(Event, ("ante", {"player": player.name, "amount": ante, "rule": "S9"}))
            )
        self.round_max = ante
        self._next_street()

    # -- streets, speakers, dealing (S10-S12) ------------------------------------------

    def _next_street(self) -> None:
        self.street += 1
        dealt = []
        players = self.players
        turn = self.from_player(self.banker)
        # Deal 1 goes round the table twice (every hole card, then every first face-up
        # card), later deals once; cards leave the deck in the order the event lists them.
        if self.street == 2:
            for name, card in zip(turn, self.source.deal(turn)):
                players[name].cards.append(card)
                dealt.append({"player": name, "card": card.text, "face": "down"})
        for name, card in zip(turn, self.source.deal(turn)):
            player = players[name]
            player.cards.append(card)
            player.showing |= card.mask
            dealt.append({"player": name, "card": card.text, "face": "up"})
        events = self.events  # (emit, inline: the hot events of a hand)
        events.append(
            new_event(Event, ("deal", {"street": self.street, "cards": dealt, "rule": "S10"}))
        )
        self.banker = self._best_showing(turn)
        speaker = players[self.banker]
        fields = {
            "street": self.street,
            "player": self.banker,
            "showing": self.showing.describe(speaker.cards[1:], speaker.showing),
            "rule": "S11",
        }
        events.append(new_event(Event, ("first_speaker", fields)))
        for player in self._live if self._live is not None else self.live():
            player.acted = False
            player.raises = 0
        # S14: after an all-in the cards come without betting; a street at the hand cap is
        # still played, each player checking or folding (engines before 4 skipped it).
        if self.allin_target is not None or (
            not self.revision.street_at_hand_cap and not self._anyone_can_bet()
        ):
            self._start_turn(None)
            self._close_street()
        else:
            self._start_turn(self.banker)

    def _best_showing(self, candidates: list[str]) -> str:
        """The candidate with the strongest face-up cards, the first of equals in the
        order given (live players from the banker counterclockwise: S11)."""
        showing = self.showing
        known = showing.known
        best, best_key = "", -1
        for name in candidates:
            player = self.players[name]
            key = known.get(player.showing)
            if key is None:
                key = showing.key(player.cards[1:], player.showing)
            if key > best_key:
                best, best_key = name, key
        return best

    def _anyone_can_bet(self) -> bool:
        top = self.limits.max_total(self)
        for player in self.live():
            if top > player.total:
                return True
        return False

    # -- legal actions (S13, S15, Q3, Q4, L9-L11) ------------------------------------------

    def legal_actions(self) -> list[Legal]:
        """What the player to act may do; computed once per state (every change adds events)."""
        if self.to_act is None:
            return []
        if self._legal_memo[0] != len(self.events):
            self._legal_memo = (
                len(self.events),
                self.limits.legal(self, self.players[self.to_act]),
            )
        return self._legal_memo[1]

    def _legal(self, action: PlayerAction) -> Legal:
        """The legal entry of `action`'s verb, or IllegalAction naming the rule."""
        if action.player != self.to_act:
            self._require_turn(action)  # raises, naming whose turn it is
        verb = action.verb
        known, listed = self._legal_memo
        if known == len(self.events):  # the list of this state is built (bots, menus)
            for legal in listed:
                if legal.verb == verb:
                    return legal
        else:  # replay: build the one entry it needs
            entry = self.limits.entry(self, self.players[action.player], verb)
            if entry is not None:
                return entry
        raise IllegalAction(*self.limits.why_not(self, self.players[action.player], verb))

    def _check_amount(self, action: PlayerAction) -> None:
        legal = self._legal(action)
        amount = action.amount
        # bet and raise entries have bounds
        low: int = legal.min_amount  # type: ignore[assignment]
        high: int = legal.max_amount  # type: ignore[assignment]
        if amount is None or not low <= amount <= high or (amount - low) % legal.step:
            why = (
                "small" if amount is None or amount < low else "large" if amount > high else "step"
            )
            rule = self.limits.amount_rule(action.verb, why)
            steps = f" in steps of {legal.step}" if legal.step > 1 else ""
            raise IllegalAction(
                rule,
                action.player,
                f"{action.verb} {amount} is not allowed: "
                f"{legal.min_amount} to {legal.max_amount}{steps} "
                f"({self.limits.bound_words(self)})",
            )
        if (
            legal.chips
            and not self.limits.chips_complete
            and not chip_sum(amount - legal.base, legal.chips)
        ):
            made = (
                f"is the call {legal.base} plus {amount - legal.base}, which"
                if legal.base
                else "is an amount"
            )
            raise IllegalAction(
                "L10",
                action.player,
                f"{action.verb} {amount} {made} no "
                f"clicks of the raise chips {list(legal.chips)} add up to",
            )

    # The legal list is the whole check: an amount within its bounds for bet and raise,
    # the verb being in it for the others.
    verify_bet = verify_raise = _check_amount
    verify_call = verify_check = verify_fold = verify_allin = _legal

    def _put_in(self, action: PlayerAction, amount: int, **extra: Any) -> None:
        player = self.players[action.player]
        player.total += amount  # put_in, inline
        self.pot += amount
        player.acted = True
        player.action_elapsed = 0
        if player.total > self.round_max:
            self.round_max = player.total
            for other in self.live():
                if other is not player:
                    other.acted = False
        fields = {"player": player.name, "amount": amount, "total": player.total, "pot": self.pot}
        if extra:
            fields.update(extra)
        self.events.append(new_event(Event, (action.verb, fields)))  # emit, inline
        self._advance()

    def _do_bet(self, action: AmountAction) -> None:
        if self.limits.opening_is_raise:  # L10: the L9 opening is the opener's raise
            self.players[action.player].raises += 1
        self._put_in(action, action.amount)

    def _do_raise(self, action: AmountAction) -> None:
        self.players[action.player].raises += 1
        self._put_in(action, action.amount)

    def _do_call(self, action: PlayerAction) -> None:
        target = self.allin_target if self.allin_target is not None else self.round_max
        self._put_in(action, target - self.players[action.player].total)

    def _do_allin(self, action: PlayerAction) -> None:
        target = self.limits.allin_total(self)
        self.allin_target = target
        self._put_in(action, target - self.players[action.player].total, rule="S15")

    def _do_check(self, action: PlayerAction) -> None:
        player = self.players[action.player]
        player.acted = True
        self.events.append(new_event(Event, ("check", {"player": player.name, "pot": self.pot})))
        self._advance()

    def _do_fold(self, action: PlayerAction) -> None:
        self.events.append(new_event(Event, ("fold", {"player": action.player, "pot": self.pot})))
        self._fold(self.players[action.player])

    # -- flow -------------------------------------------------------------------------

    def _fold(self, player: PlayerState) -> None:
        self.mark_folded(player)
        if player.coins == self.bound:
            self.bound = min([p.coins for p in self.live()])
        if player.result is None:
            player.result = Result.LOSS
        was_to_act = self.to_act == player.name
        if len(self.live()) == 1:
            self._end_without_showdown()
        elif was_to_act or self._round_complete():
            self._advance(player.name)  # (after them)

    def _round_complete(self) -> bool:
        target = self.allin_target if self.allin_target is not None else self.round_max
        for player in self.live():
            if not player.acted or player.total != target:
                return False
        return True

    def _advance(self, after: str | None = None) -> None:
        if self.settlement is not None:
            return
        if self._round_complete():
            self._start_turn(None)
            self._close_street()
            return
        current: str = after or self.to_act  # type: ignore[assignment]  # (one is to act)
        self._start_turn(self.next_live(current))

    def _close_street(self) -> None:
        fields = {"street": self.street, "pot": self.pot, "rule": "S14"}
        self.events.append(new_event(Event, ("street_end", fields)))  # emit, inline
        if self.street == LAST_STREET:
            self._showdown()
        else:
            self._next_street()

    def _timeout_fold(self, player: PlayerState) -> None:
        self.emit("fold", player=player.name, pot=self.pot, cause="timeout", rule="S17")
        self._fold(player)

    # -- escape (S18, S19, D-1, D-9, G2) -------------------------------------------------------

    def _escape_fold(self, player: PlayerState, cause: str) -> None:
        self.emit("fold", player=player.name, pot=self.pot, cause=cause, rule="S19")
        self._fold(player)

    def _escape_winner(self, escapee: PlayerState) -> str:
        banker = self.banker
        if banker == escapee.name:  # D-1: the best showing player left takes the place
            banker = self._best_showing(
                [name for name in self.from_player(banker) if name != escapee.name]
            )
            self.emit("banker_replaced", player=banker, escaped=escapee.name, rule="D-1")
        elif self.players[banker].folded and self.revision.escape_winner_still_in_hand:
            # D-10: a banker who folded has given up the hand; the best showing player
            # still in it (not the escapee) wins the escape instead.
            banker = self._best_showing(
                [name for name in self.from_player(banker) if name != escapee.name]
            )
            self.emit(
                "banker_replaced",
                player=banker,
                folded=self.banker,
                escaped=escapee.name,
                rule="D-10",
            )
        return banker

    # -- endings (S14, S16, S20-S22) -----------------------------------------------------

    def _end_without_showdown(self) -> None:
        winner = self.live()[0].name
        ended = {"reason": "all_folded", "winners": [winner], "pot": self.pot, "rule": "S16"}
        self.events.append(new_event(Event, ("hand_ended", ended)))  # emit, inline
        self._pay({winner: self.pot}, "all_folded")

    def _showdown(self) -> None:
        live = self.live()
        keys = {p.name: self.ranking.key(p.cards) for p in live}
        best = max(keys.values())
        winners = [p for p in self.from_player(self.banker) if keys[p] == best]
        ordered = sorted(live, key=lambda p: keys[p.name], reverse=True)
        hands = [
            {
                "player": p.name,
                "cards": [str(c) for c in p.cards],
                "category": self.ranking.category(p.cards),
                "description": self.ranking.describe(p.cards),
            }
            for p in live
        ]
        explanation = self.ranking.explain(ordered[0].cards, ordered[1].cards)
        shown = {"hands": hands, "winners": winners, "explanation": explanation, "rule": "S14"}
        ended = {"reason": "showdown", "winners": winners, "pot": self.pot, "rule": "S14"}
        self.events += (
            new_event(Event, ("showdown", shown)),
            new_event(Event, ("hand_ended", ended)),
        )
        self._pay(split_pot(self.pot, winners), "showdown")

    def face_up(self, name: str) -> list[str]:
        """Every card but the hole card lies face up (S10)."""
        return [str(card) for card in self.players[name].cards[1:]]

    def _pay(self, shares: dict[str, int], reason: str) -> None:
        draw = len(shares) > 1
        entries, results = [], {}
        for name in self.order:
            player = self.players[name]
            share = shares.get(name, 0)
            entries.append(
                Entry(
                    name,
                    share - player.total,
                    "won"
                    if share and not draw
                    else "split"
                    if share
                    else "folded"
                    if player.folded
                    else "lost",
                )
            )
            results[name] = (
                player.result
                if player.result in (Result.ESCAPE, Result.DISCONNECT)
                else Result.DRAW
                if share and draw
                else Result.WIN
                if share
                else Result.LOSS
            )
        self._finish(entries, results, tuple(shares), reason)

    def _minimum_after_hand(self) -> tuple[int, dict[str, Any]]:
        return self.limits.min_holding, self.limits.below_minimum_fields()
