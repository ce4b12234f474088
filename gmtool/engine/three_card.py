"""Suihua three-card showhand (RULES H1-H11, with S17-S19 and G1-G3), on the `Hand` framework.

The system posts everyone's ante (H3), deals three face-down cards each from the
dealer's next player counterclockwise, one card at a time (H1, H2), and that player
speaks first (H2). On their turn a player may `look` (H4: blind -> seen, permanent, the
turn goes on), `follow N` (H5, prices in `three_card_pricing`), `pass` (H6), `buy
TARGET` (H7) or `open` (H8). The last player left, or the winner of an open, takes the
whole pot. Decisions where the rules are silent (prices: also `three_card_pricing`):

- Current bet: the amount of a player's last follow, in the state they made it; before
  their first follow, the ante, posted blind. The first speaker sets the first bet with
  any amount of their own state (H5: the ante is not a bet to follow); each later follow
  answers the previous bet, the last follow made in the hand by anyone, even if its
  player has left since. The cap bounds follows only: buy and open prices are multiples
  set by H7/H8 and may exceed it.
- Looking (H4): at any time after the deal, on one's turn or not, also after passing
  (the seed sets no limit; it changes nothing for the others then). It never ends a
  turn, nor restarts the action clock. A player may look, buy and open within one turn.
- Seats (H12, D-11): a player needs the ante plus one follow at the cap to sit, and is
  named below the minimum after a hand that leaves less (S21).
- Buying (H7): only on one's own turn, by a seen player, of another seen player still in
  the hand; the price goes into the pot. The loser leaves the hand. A losing buyer's turn
  ends. A winning buyer's turn goes on with a fresh action clock, and they must now
  follow the previous bet (or pass): no second buy and no open in that turn. If the buy
  leaves one player, that player wins at once. Two seen players alone may buy too.
- Opening (H8): on one's turn with exactly two players in the hand; the opener's and the
  opened player's states at that moment pick the multiple. Opening ends the hand.
- Coins: nobody may put in more than the coins they held at the start of the hand
  (coins never go negative, as D-9); an action that would is refused under its own rule,
  and pass is always possible. A training room (`coins = false`) has no such bound.
- Rounds (H11, D-8): a round ends once every player still in the hand has had a turn in
  it. With `max_rounds` = N > 0, when round N ends the system compares every remaining
  hand as a chain of opens in speaking order from the player who would speak next, each
  equal hand going to the opened player (H8): so the best hand wins, and among equal best
  hands the one last in that order. There is always exactly one winner.
- Escape with policy "forfeit_to_banker": as S19; if the escapee is the dealer, or the
  dealer has already left the hand (D-10), the next player counterclockwise from the
  dealer still in the hand, not the escapee, wins in the dealer's place (D-1 has no
  showing cards to go by in three-card).
- The winner is the next hand's dealer (H2): `hand_ended` names it as `next_banker`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from gmtool.engine.config import Compiled, EngineConfig, Tier
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
from gmtool.engine.seating import check_holdings, open_tier, seat_need
from gmtool.engine.settlement import Entry, Result
from gmtool.engine.three_card_pricing import Bet, Prices, state_word
from gmtool.engine.versions import ENGINE_VERSION, Revision

CARDS_EACH = 3


class BuyAction(PlayerAction, Protocol):
    """`buy TARGET` as `_do_buy` gets it: `verify_buy` has checked that TARGET is seated."""

    @property
    def target(self) -> str: ...


def _prices(config: EngineConfig, tier: Tier, revision: Revision) -> Prices:
    """`Prices.for_tier`, made once per room and engine version: prices never change once
    made (nothing writes to them), so the hands of a room share them, as stud5's share
    their limits (kept with the typed config and tier, so their ids stay their own)."""
    key = (id(config), id(tier), revision.version)
    kept = _PRICES.get(key)
    if kept is not None and kept[0] is config and kept[1] is tier:
        return kept[2]
    prices = Prices.for_tier(config, tier, revision)
    if len(_PRICES) >= 256:
        _PRICES.clear()
    _PRICES[key] = (config, tier, prices)
    return prices


_PRICES: dict[tuple[int, int, str], tuple[EngineConfig, Tier, Prices]] = {}


class ThreeCardHand(Hand):
    """One hand of Suihua three-card under a compiled three-card configuration."""

    game = "three-card"
    seat_rule = "H1"
    verb_rule = "H5"

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
        """`ante` is the hand classes' common signature (`play.HANDS`): the room's ante is
        the system's (H3), so it is not read here."""
        super().__init__(config, seats, source, engine)
        config = self.config
        self.tier = open_tier(config, tier_id)
        if banker not in self.players:
            raise SetupError("H2", f"dealer {banker!r} is not seated")
        self.prices = _prices(config, self.tier, self.revision)
        self.training = not self.tier.coins
        if not self.training:
            if self.revision.seat_for_a_follow:  # H12: the ante plus one follow at the cap
                need, rule = seat_need(config, self.tier), None
            else:  # engines before 4: the ante the system posts was enough (H3)
                need, rule = max(self.prices.ante, self.prices.min_holding), "H3"
            if min([p.coins for p in self.players.values()]) < need:  # someone cannot sit
                coins = {p.name: p.coins for p in self.players.values()}
                check_holdings(config, tier_id, coins, need=need, rule=rule)
        self.ranking = ranking or ranking_for(config)
        self.banker = banker
        # [three_card] is there: Prices.for_tier has read it
        self.max_rounds = config.three_card.max_rounds  # type: ignore[union-attr]
        self.seen = {name: False for name in self.order}
        posted = Bet(self.prices.ante, False)  # (blind)
        self.bets = {name: posted for name in self.order}  # current bets (H5)
        # the previous bet the next follow answers (H5): none before the first bet
        self.last_bet: Bet | None = None if self.revision.first_bet_own_state else posted
        self.round = 1
        self.bought = False  # the player to act won a buy this turn and now follows (H7)
        self._turns: set[str] = set()  # who has had a turn in this round (H11)
        self._left: dict[str, str] = {}  # how each player left the hand
        started = {
            "game": self.game,
            "engine": self.revision.version,
            "config_id": config.config_id,
            "tier": tier_id,
            "ante": self.prices.ante,
            "cap": self.prices.cap,
            "banker": banker,
            "training": self.training,
            "max_rounds": self.max_rounds,
            "seats": [{"player": s.name, "coins": s.coins} for s in seats],
            "rule": "H2",
        }
        events = self.events
        events.append(new_event(Event, ("hand_started", started)))  # emit, inline
        ante = self.prices.ante
        for player in self.players.values():
            player.total += ante  # put_in, inline
            self.pot += ante
            events.append(
                new_event(Event, ("ante", {"player": player.name, "amount": ante, "rule": "H3"}))
            )
        first = self.next_live(banker)
        dealt = []
        turn = self.from_player(first)
        cards_of = [self.players[name].cards for name in turn]
        for _ in range(CARDS_EACH):
            for name, cards, card in zip(turn, cards_of, self.source.deal(turn)):
                cards.append(card)
                dealt.append({"player": name, "card": card.text, "face": "down"})
        self.events += (
            new_event(Event, ("deal", {"cards": dealt, "rule": "H1"})),
            new_event(Event, ("first_speaker", {"player": first, "rule": "H2"})),
        )  # emit, inline
        self._start_turn(first)

    # -- queries -----------------------------------------------------------------------

    def legal_actions(self) -> list[Legal]:
        if self.to_act is None:
            return []
        name = self.to_act
        out = [] if self.seen[name] else [Legal("look")]
        amounts = self._affordable(name, self.prices.follow_amounts(self.last_bet, self.seen[name]))
        if amounts:
            out.append(Legal("follow", amounts[0], amounts[-1], amounts=amounts))
        if not self.bought:
            targets = tuple(
                t for t in self.buy_targets(name) if self._can_pay(name, self.buy_price(t))
            )
            if targets:
                out.append(Legal("buy", targets=targets))
            if len(self.live()) == 2 and self._can_pay(name, self.open_price(name)):
                price = self.open_price(name)
                out.append(Legal("open", price, price))
        out.append(Legal("pass"))
        return out

    def has_looked(self, name: str) -> bool:
        """H4: blind (False) until the player looks, seen (True) after."""
        return self.seen[name]

    def buy_targets(self, buyer: str) -> tuple[str, ...]:
        """Seen players the seen `buyer` may buy (H7), in seat order."""
        if not self.seen[buyer]:
            return ()
        return tuple(p.name for p in self.live() if p.name != buyer and self.seen[p.name])

    def buy_price(self, target: str) -> int:
        """H7: what buying `target` costs now."""
        return self.prices.buy_price(self.bets[target])

    def open_price(self, opener: str) -> int:
        """H8: what opening the other player costs `opener` now (two players left)."""
        opened = self._other(opener)
        return self.prices.open_price(self.seen[opener], self.bets[opened], self.seen[opened])

    def _other(self, name: str) -> str:
        return next(p.name for p in self.live() if p.name != name)

    def _can_pay(self, name: str, amount: int) -> bool:
        player = self.players[name]
        return self.training or player.total + amount <= player.coins

    def _affordable(self, name: str, amounts: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a for a in amounts if self._can_pay(name, a))

    def _refuse_unpayable(self, action: PlayerAction, rule: str, amount: int) -> None:
        if not self._can_pay(action.player, amount):
            player = self.players[action.player]
            raise IllegalAction(
                rule,
                action.player,
                f"{action.verb} costs {amount}, but only "
                f"{player.coins - player.total} of the {player.coins} coins "
                "held at the start of the hand are left",
            )

    # -- look (H4) --------------------------------------------------------------------------

    def verify_look(self, action: PlayerAction) -> None:
        if self.seen[action.player]:
            raise IllegalAction("H4", action.player, "has already looked; looking is permanent")

    def _do_look(self, action: PlayerAction) -> None:
        self.seen[action.player] = True
        self.events.append(new_event(Event, ("look", {"player": action.player, "rule": "H4"})))

    # -- follow (H3, H5) -----------------------------------------------------------------------

    def verify_follow(self, action: PlayerAction) -> None:
        self._require_turn(action, "H2")
        seen, amount = self.seen[action.player], action.amount
        allowed = self.prices.follow_amounts(self.last_bet, seen)
        if amount is not None and amount > self.prices.cap:
            raise IllegalAction(
                "H3", action.player, f"follow {amount} is above the room cap {self.prices.cap}"
            )
        if amount not in allowed:
            raise IllegalAction(
                "H5",
                action.player,
                f"follow {amount} is not allowed: {self.prices.follow_words(self.last_bet, seen)}",
            )
        self._refuse_unpayable(action, "H5", amount)

    def _do_follow(self, action: AmountAction) -> None:
        player = self.players[action.player]
        previous = self.last_bet
        bet = Bet(action.amount, self.seen[player.name], player.name)
        self.put_in(player, bet.amount)
        self.bets[player.name] = self.last_bet = bet
        fields = {
            "player": player.name,
            "amount": bet.amount,
            "state": state_word(bet.seen),
            "previous": previous.as_json() if previous is not None else None,
            "minimum": (
                self.prices.minimum_json(previous, bet.seen) if previous is not None else None
            ),
            "total": player.total,
            "pot": self.pot,
            "rule": "H5",
        }
        self.events.append(new_event(Event, ("follow", fields)))  # emit, inline
        self._end_turn(player.name)

    # -- pass (H6) ---------------------------------------------------------------------------

    def verify_pass(self, action: PlayerAction) -> None:
        self._require_turn(action, "H2")

    def _do_pass(self, action: PlayerAction) -> None:
        fields = {"player": action.player, "pot": self.pot, "rule": "H6"}
        self.events.append(new_event(Event, ("pass", fields)))  # emit, inline
        self._leave(self.players[action.player], "passed")

    def _timeout_fold(self, player: PlayerState) -> None:
        self.emit("pass", player=player.name, pot=self.pot, cause="timeout", rule="S17")
        self._leave(player, "passed")

    # -- buy (H7) ----------------------------------------------------------------------------

    def verify_buy(self, action: PlayerAction) -> None:
        self._require_turn(action, "H2")
        buyer, target = action.player, action.target
        if self.bought:
            raise IllegalAction(
                "H7", buyer, "has won a buy this turn and now follows the previous bet (or passes)"
            )
        if not self.seen[buyer]:
            raise IllegalAction("H7", buyer, "only seen players may buy: look first")
        if target == buyer:
            raise IllegalAction("H7", buyer, "cannot buy their own cards")
        if target not in self.players or self.players[target].folded:
            raise IllegalAction("H7", buyer, f"{target} is not in the hand")
        if not self.seen[target]:
            raise IllegalAction(
                "H7", buyer, f"{target} is blind; only seen players' cards may be bought"
            )
        self._refuse_unpayable(action, "H7", self.buy_price(target))

    def _do_buy(self, action: BuyAction) -> None:
        buyer, target = self.players[action.player], self.players[action.target]
        price = self.buy_price(target.name)
        self.put_in(buyer, price)
        self.emit(
            "buy",
            player=buyer.name,
            target=target.name,
            amount=price,
            target_bet=self.bets[target.name].amount,
            total=buyer.total,
            pot=self.pot,
            rule="H7",
        )
        buyer_wins = self.ranking.compare(buyer.cards, target.cards) > 0  # equal: buyer loses
        winner, loser = (buyer, target) if buyer_wins else (target, buyer)
        self.emit(
            "buy_result",
            buyer=buyer.name,
            target=target.name,
            winner=winner.name,
            loser=loser.name,
            hands=self._hands([buyer, target]),
            explanation=self.ranking.explain(buyer.cards, target.cards),
            rule="H7",
        )
        if buyer_wins:
            self.bought = True
            buyer.action_elapsed = 0  # the follow that comes next gets a fresh clock
        self._leave(loser, "bought_out")

    # -- open (H8) ---------------------------------------------------------------------------

    def verify_open(self, action: PlayerAction) -> None:
        self._require_turn(action, "H2")
        if self.bought:
            raise IllegalAction(
                "H7",
                action.player,
                "has won a buy this turn and now follows the previous bet (or passes)",
            )
        left = len(self.live())
        if left != 2:
            raise IllegalAction(
                "H8",
                action.player,
                f"opening needs exactly two players left in the hand; {left} are",
            )
        self._refuse_unpayable(action, "H8", self.open_price(action.player))

    def _do_open(self, action: PlayerAction) -> None:
        opener = self.players[action.player]
        opened = self.players[self._other(opener.name)]
        price = self.open_price(opener.name)
        self.put_in(opener, price)
        self.emit(
            "open",
            player=opener.name,
            opened=opened.name,
            amount=price,
            price=self.prices.open_words(
                self.seen[opener.name], self.bets[opened.name], self.seen[opened.name]
            ),
            total=opener.total,
            pot=self.pot,
            rule="H8",
        )
        winner = opener if self.ranking.compare(opener.cards, opened.cards) > 0 else opened
        self._showdown(
            [opener, opened],
            winner,  # equal hands: the opened player wins
            self.ranking.explain(opener.cards, opened.cards),
            "open",
            "H8",
        )

    # -- flow --------------------------------------------------------------------------------

    def _leave(self, player: PlayerState, how: str) -> None:
        """`player` is out of the hand (pass, timeout, escape, lost buy)."""
        self.mark_folded(player)
        self._left[player.name] = how
        if player.result is None:
            player.result = Result.LOSS
        live = self.live()
        if len(live) == 1:
            reason = "buy" if how == "bought_out" else "all_passed"
            self.emit(
                "hand_ended",
                reason=reason,
                winners=[live[0].name],
                pot=self.pot,
                next_banker=live[0].name,
                rule="H7" if reason == "buy" else "H6",
            )
            self._pay(live[0], reason)
        elif self.to_act == player.name:
            self._end_turn(player.name)

    def _end_turn(self, name: str) -> None:
        """The turn of `name` is over: the next player speaks, maybe in a new round (H11)."""
        self.bought = False
        self._turns.add(name)
        following = self.next_live(name)
        if following in self._turns:
            fields = {"round": self.round, "pot": self.pot, "rule": "H11"}
            self.events.append(new_event(Event, ("round_end", fields)))  # emit, inline
            if self.max_rounds and self.round >= self.max_rounds:
                self._round_limit(following)
                return
            self.round += 1
            self._turns = set()
        self._start_turn(following)

    def _round_limit(self, first: str) -> None:
        """H11/D-8: compare every remaining hand as a chain of opens from `first`."""
        chain = [self.players[name] for name in self.from_player(first)]
        winner = chain[0]
        for opened in chain[1:]:
            if self.ranking.compare(winner.cards, opened.cards) <= 0:
                winner = opened  # equal hands: the opened player wins (H8)
        runner_up = max(
            (p for p in chain if p is not winner), key=lambda p: self.ranking.key(p.cards)
        )
        explanation = self.ranking.explain(winner.cards, runner_up.cards)
        if self.ranking.compare(winner.cards, runner_up.cards) == 0:
            explanation += (
                f"; equal hands: the system opens in speaking order from "
                f"{first} and the opened player wins each tie (H8)"
            )
        self._showdown(chain, winner, explanation, "round_limit", "H11")

    def _showdown(
        self,
        players: list[PlayerState],
        winner: PlayerState,
        explanation: str,
        reason: str,
        rule: str,
    ) -> None:
        self.to_act = None
        self.emit(
            "showdown",
            hands=self._hands(players),
            winners=[winner.name],
            explanation=explanation,
            rule=rule,
        )
        for player in players:
            if player is not winner:
                self._left[player.name] = "lost"
        self.emit(
            "hand_ended",
            reason=reason,
            winners=[winner.name],
            pot=self.pot,
            next_banker=winner.name,
            rule=rule,
        )
        self._pay(winner, reason)

    def _hands(self, players: list[PlayerState]) -> list[dict[str, Any]]:
        return [
            {
                "player": p.name,
                "cards": [str(c) for c in p.cards],
                "category": self.ranking.category(p.cards),
                "description": self.ranking.describe(p.cards),
            }
            for p in players
        ]

    # -- escape (S18, S19, G2) ----------------------------------------------------------------

    def _escape_fold(self, player: PlayerState, cause: str) -> None:
        self.emit("pass", player=player.name, pot=self.pot, cause=cause, rule="S19")
        self._leave(player, "escape")

    def _escape_winner(self, escapee: PlayerState) -> str:
        banker = self.banker
        if banker == escapee.name:  # D-1 in three-card: the next player still in the hand
            banker = self.next_live(escapee.name)
            self.emit("banker_replaced", player=banker, escaped=escapee.name, rule="D-1")
        elif self.players[banker].folded and self.revision.escape_winner_still_in_hand:
            # D-10: a dealer who left the hand does not win it; the next player from the
            # dealer counterclockwise still in it, not the escapee, wins instead.
            banker = next(name for name in self.from_player(banker) if name != escapee.name)
            self.emit(
                "banker_replaced",
                player=banker,
                folded=self.banker,
                escaped=escapee.name,
                rule="D-10",
            )
        return banker

    def _escape_charge(self, escapee: PlayerState) -> int:
        """D-9, and in a training room (virtual stacks) the whole pot."""
        return self.pot if self.training else min(self.pot, escapee.coins)

    def _ended_fields(self, winner: str) -> dict[str, Any]:
        return {"next_banker": winner}  # H2: the winner deals the next hand

    # -- settlement (S20, S21, S22) -------------------------------------------------------------

    def _pay(self, winner: PlayerState, reason: str) -> None:
        """The winner takes the whole pot; everyone else loses what they put in."""
        pot = self.pot
        entries, results = [], {}
        for name in self.order:
            player = self.players[name]
            if player is winner:
                entries.append(Entry(name, pot - player.total, "won"))
                results[name] = Result.WIN
            else:
                entries.append(Entry(name, -player.total, self._left.get(name, "lost")))
                results[name] = player.result or Result.LOSS
        self._finish(entries, results, (winner.name,), reason)

    def _minimum_after_hand(self) -> tuple[int, dict[str, Any]]:
        return self.prices.min_holding, {"rule": "S21"}
