"""Three-card hands played per second: random legal actions, no database.

    python benchmarks/three_card_speed.py            # about 2 seconds
    python benchmarks/three_card_speed.py 10         # measure for 10 seconds
    python benchmarks/three_card_speed.py 10 --seed 7

Each hand seats 2 to 7 players in a random room of the shipped Suihua profile, deals from
a deck shuffled by ``random.Random`` (the engine's own HMAC shuffle is measured apart, as
a note), and lets the player to act pick a random verb among ``legal_actions`` and then a
random amount or target, passing one time in four when something else is possible, until
the hand ends. Hands that reach 200 actions are ended by passes (the seed sets no round
limit, H11). The ranking table is built before timing, as a running host would have it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from gmtool.engine.deck import shuffle
from gmtool.engine.events import Action
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import DeckSource, Seat
from gmtool.engine.play import start_hand
from gmtool.engine.rankings import deck_for
from gmtool.rules.compile import compile_file

PROFILE = Path(__file__).resolve().parent.parent / "rules" / "suihua-three-card.toml"
NAMES = ("ann", "bob", "carl", "dan", "eve", "fay", "gus")
DEFAULT_SEED = 20_240_601
MAX_ACTIONS = 200


def play_random_hand(config: dict, ranking, cards: list, rng: random.Random) -> int:
    """Play one hand with random legal actions; returns the number of actions taken."""
    players = rng.randint(2, 7)
    tier = rng.choice(config["tiers"])["id"]
    seats = [Seat(name, 2000) for name in NAMES[:players]]
    deck = cards[:]
    rng.shuffle(deck)
    hand = start_hand(
        config, tier, seats, rng.choice(seats).name, DeckSource(deck), ranking=ranking
    )
    actions = 0
    while not hand.is_over:
        if actions >= MAX_ACTIONS:
            hand.apply(Action("pass", hand.to_act))
            continue
        legal = hand.legal_actions()
        others = [entry for entry in legal if entry.verb != "pass"]
        if others and rng.randrange(4):
            legal = others
        hand.apply(rng.choice(rng.choice(legal).actions(hand.to_act)))
        actions += 1
    return actions


def hands_per_second(seconds: float = 2.0, seed: int = DEFAULT_SEED) -> float:
    """Three-card hands played per second for about ``seconds`` (random legal actions)."""
    config = compile_file(PROFILE)
    ranking = ranking_for(config)
    cards = list(deck_for(config).cards)
    ranking.key(cards[:3])  # builds the table outside the timing
    rng = random.Random(seed)
    hands = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        play_random_hand(config, ranking, cards, rng)
        hands += 1
    return hands / elapsed


def shuffles_per_second(seconds: float = 0.5) -> float:
    """The engine's HMAC-SHA256 Fisher-Yates shuffle of 52 cards, per second (a note)."""
    cards = list(deck_for(compile_file(PROFILE)).cards)
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        shuffle(cards, count.to_bytes(8, "big"))
        count += 1
    return count / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "seconds", nargs="?", type=float, default=2.0, help="how long to play hands (default 2)"
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="seed of the random players and decks"
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("seconds must be positive")
    rate = hands_per_second(args.seconds, args.seed)
    print(
        f"three-card hands played per second: {rate:,.0f} "
        f"(random legal actions, no database, {args.seconds:g} s, seed {args.seed})"
    )
    print(
        f"  note: the HMAC-SHA256 deck shuffle alone runs "
        f"{shuffles_per_second(min(0.5, args.seconds)):,.0f}/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
