"""What a bot can see of its chances: a card-strength estimate in [0, 1] (pure).

A bot sees its own cards (in three-card only once it has looked, H4) and the face-up
cards of the others (stud5, S10); never a face-down card of anyone else (G3). From that
it estimates the chance that its cards beat every other live player's:

- its own holding is placed among all holdings of the same size in the deck: the
  mid-rank percentile of its key (the full ranking for a complete hand, the showing
  order of S7 for a partial stud5 hand), computed once per ranking by enumeration;
- against an opponent who shows nothing (three-card), a random holding: the chance is
  the percentile itself; against face-up cards, `0.5 + mine - theirs` (their showing
  cards' percentile among holdings of that size), kept within [0.01, 0.99];
- the chances against each opponent are multiplied (as if independent).

It is a heuristic for bot play, not an equity calculation: cheap (a few dict look-ups a
decision) and monotone in what matters (better cards, weaker boards, fewer opponents).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import combinations, islice
from math import comb
from typing import TYPE_CHECKING

from gmtool.engine.cards import Card
from gmtool.engine.hand import Hand, PlayerState

if TYPE_CHECKING:
    from gmtool.engine.rankings import Ranking

ENUMERATION_LIMIT = 400_000  # holdings of one size enumerated exactly; above, a strided sample


class Percentiles:
    """Mid-rank percentile of every holding of each size of a ranking's deck, by bitmask."""

    def __init__(self, ranking: Ranking) -> None:
        self.ranking: Ranking = ranking
        self.cards = tuple(ranking.deck.cards)
        size = ranking.hand_size
        partial = hasattr(ranking, "showing_key")  # stud5: partial hands rank by S7
        self.sizes = tuple(range(1, size + 1)) if partial else (size,)
        self.by_mask: dict[int, float] = {}
        self._sorted: dict[int, list[int]] = {}
        for k in self.sizes:
            self._build(k)

    def _key(self, cards: Sequence[Card], mask: int) -> int:
        if len(cards) == self.ranking.hand_size:
            return int(self.ranking.key(cards))
        return int(self.ranking.showing_key(cards, mask))  # type: ignore[union-attr]

    def _build(self, size: int) -> None:
        total = comb(len(self.cards), size)
        step = -(-total // ENUMERATION_LIMIT)  # 1 for every shipped deck
        keyed: list[tuple[int, int]] = []
        for combo in islice(combinations(self.cards, size), 0, None, step):
            mask = 0
            for card in combo:
                mask |= card.mask
            keyed.append((mask, self._key(combo, mask)))
        keys = sorted(key for _, key in keyed)
        self._sorted[size] = keys
        if step == 1:
            self.by_mask.update((mask, self._rank(keys, key)) for mask, key in keyed)

    @staticmethod
    def _rank(keys: list[int], key: int) -> float:
        below, upto = bisect_left(keys, key), bisect_right(keys, key)
        return (below + (upto - below) / 2) / len(keys)

    def of(self, cards: Sequence[Card], mask: int | None = None) -> float:
        """The percentile of `cards` among holdings of as many cards (0 worst, 1 best)."""
        if mask is None:
            mask = 0
            for card in cards:
                mask |= card.mask
        known = self.by_mask.get(mask)
        if known is not None:
            return known
        return self._rank(self._sorted[len(cards)], self._key(cards, mask))

    def of_mask(self, mask: int) -> float:
        """`of` for the cards of a bitmask (a player's face-up cards)."""
        known = self.by_mask.get(mask)
        if known is not None:
            return known
        return self.of([card for card in self.cards if card.mask & mask], mask)


_TABLES: dict[int, tuple[object, Percentiles]] = {}


def percentiles(ranking: Ranking) -> Percentiles:
    """The percentile tables of `ranking`, built once per ranking object (rankings are
    shared between configs that rank alike, engine/rankings)."""
    found = _TABLES.get(id(ranking))
    if found is not None and found[0] is ranking:
        return found[1]
    table = Percentiles(ranking)
    _TABLES[id(ranking)] = (ranking, table)  # the ranking is kept, so its id stays its own
    return table


class Sight:
    """`strength` bound to one ranking's tables: what a driver playing many hands of one
    configuration keeps (the simulator), saving the table look-up a decision."""

    __slots__ = ("table", "by_mask")

    def __init__(self, ranking: Ranking) -> None:
        self.table = percentiles(ranking)
        self.by_mask = self.table.by_mask

    def strength(self, hand: Hand, name: str) -> float | None:
        """The chance, as `name` can judge it, that their cards beat every other live
        player's; None while they have not looked at their cards (three-card blind, H4)."""
        if hand.has_looked(name) is False:
            return None
        return self.seen(hand, hand.players[name])

    def judge(self, hand: Hand) -> Callable[[Hand, PlayerState], float | None]:
        """What a driver playing `hand` calls with (hand, player state) at each turn:
        `seen` where no player of this game is ever blind (the hand does not say who has
        looked), else `looked`."""
        return self.seen if type(hand).has_looked is Hand.has_looked else self.looked

    def looked(self, hand: Hand, player: PlayerState) -> float | None:
        """`strength` by player state: None while the player has not looked (H4)."""
        if hand.has_looked(player.name) is False:
            return None
        return self.seen(hand, player)

    def seen(self, hand: Hand, player: PlayerState) -> float:
        """`strength` of a player who sees their own cards (any stud5 player, a three-card
        player who has looked). The simulator asks it at every turn, so the common case,
        where the player and every other show cards that the tables hold, is one tight
        loop; any other case (nothing shown, a sampled table) is `chance`, which gives the
        same number in every case."""
        showing = player.showing
        if showing:
            cards = player.cards
            mask = showing | cards[0].mask  # stud5: the hole card and the face-up cards
            if mask.bit_count() != len(cards):  # not so: every card's bit, one by one
                mask = 0
                for card in cards:
                    mask |= card.mask
            by_mask = self.by_mask
            try:
                mine = 0.5 + by_mask[mask]
                chance = 1.0
                for other in hand.live():
                    if other is not player:
                        edge = mine - by_mask[other.showing]
                        if edge < 0.01:
                            edge = 0.01
                        elif edge > 0.99:
                            edge = 0.99
                        chance *= edge
                return chance
            except KeyError:  # a holding the tables do not hold (sampled), or none shown
                pass
        return self.chance(hand, player)

    def chance(self, hand: Hand, player: PlayerState) -> float:
        """The estimate in full: the product over the other live players of `0.5 + mine -
        theirs` (their face-up cards' percentile; kept within [0.01, 0.99]), or of `mine`
        against a player who shows nothing."""
        others = [other.showing for other in hand.live() if other is not player]
        return self.told(player.cards, others)

    def told(self, cards: Sequence[Card], others: Sequence[int]) -> float:
        """The estimate from what a player is told: their own `cards` and, for each other
        live player, the bitmask of their face-up cards (0: they show nothing). A network
        bot (gateway/client.py) knows no more than this."""
        by_mask = self.by_mask
        mask = 0
        for card in cards:
            mask |= card.mask
        mine = by_mask.get(mask)
        if mine is None:
            mine = self.table.of(cards, mask)
        chance = 1.0
        for showing in others:
            if showing:
                theirs = by_mask.get(showing)
                if theirs is None:
                    theirs = self.table.of_mask(showing)
                edge = 0.5 + mine - theirs
                chance *= 0.01 if edge < 0.01 else 0.99 if edge > 0.99 else edge
            else:
                chance *= mine
        return chance


def strength(hand: Hand, name: str) -> float | None:
    """`Sight.strength` for one decision (the host's bots): the chance, as `name` can judge
    it, that their cards beat every other live player's; None while blind (H4)."""
    ranking: Ranking = hand.ranking  # type: ignore[attr-defined]  # (each game's hand has one)
    return Sight(ranking).strength(hand, name)
