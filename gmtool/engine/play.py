"""Starting, driving and replaying hands of any game from a compiled configuration.

This is the engine's front door for its four drivers (the host, replay and audit, the
sandbox, the bots): they name a tier, seats, a banker and a card source, and get the
game's hand object back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gmtool.engine.cards import Card
from gmtool.engine.config import Compiled, EngineConfig, engine_config
from gmtool.engine.deck import shuffle
from gmtool.engine.events import Action, Event
from gmtool.engine.games import Game, Stud5, ThreeCard, game_of
from gmtool.engine.hand import CardSource, DeckSource, FixedSource, Hand, Seat
from gmtool.engine.rankings import Ranking, deck_for
from gmtool.engine.seating import coins_to_sit  # noqa: F401  (the drivers' front door)
from gmtool.engine.stud5 import Stud5Hand
from gmtool.engine.three_card import ThreeCardHand
from gmtool.engine.versions import ENGINE_VERSION

# The hand class of each game: games.py says what a family is, these play it. Every hand
# class takes (config, tier_id, seats, banker, source, ante, ranking, engine).
HANDS: dict[type[Game], type[Stud5Hand] | type[ThreeCardHand]] = {
    Stud5: Stud5Hand,
    ThreeCard: ThreeCardHand,
}


def start_hand(
    config: Compiled | EngineConfig,
    tier_id: str,
    seats: Sequence[Seat],
    banker: str,
    source: CardSource,
    ante: int | None = None,
    ranking: Ranking | None = None,
    engine: str = ENGINE_VERSION,
) -> Hand:
    """A new hand of the configuration's game, by the rules of engine version `engine`
    (replay passes the recorded one); raises SetupError if it cannot start."""
    spec = engine_config(config)
    return HANDS[type(game_of(spec))](spec, tier_id, seats, banker, source, ante, ranking, engine)


def seeded_source(config: Compiled | EngineConfig, seed: bytes) -> DeckSource:
    """The deck a hand seed gives (docs/architecture.md: HMAC-SHA256 Fisher-Yates)."""
    return shuffled_source(deck_for(config).cards, seed)


def shuffled_source(cards: Sequence[Card], seed: bytes) -> DeckSource:
    """`seeded_source` from the configuration's deck in canonical order (`deck_for(config)
    .cards`), for callers that deal many hands of one configuration."""
    return DeckSource(shuffle(cards, seed))


def fixed_source(
    config: Compiled | EngineConfig, cards: Mapping[str, str | Sequence[str]]
) -> FixedSource:
    """Cards named per player ("AS KS QS JS TS"), dealt in the order given."""
    deck = deck_for(config)
    return FixedSource({player: deck.parse_cards(text) for player, text in cards.items()})


def replay(hand: Hand, events: Iterable[Event]) -> list[Event]:
    """Apply the inputs recorded in `events` to a freshly started `hand`; its new log."""
    from gmtool.engine.events import inputs_of

    for action in inputs_of(list(events)):
        hand.apply(action)
    return hand.events


__all__ = [
    "Action",
    "Seat",
    "fixed_source",
    "replay",
    "seeded_source",
    "shuffled_source",
    "start_hand",
]
