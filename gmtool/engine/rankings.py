"""Decks and rankings of configurations, built once per process and shared.

Rankings are shared between configurations that rank alike (same deck, order and
policy), so each ranking table is built once however many configs use it. Which ranking
a config's game uses is the game's (`engine/games.ranking_for`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias, cast

from gmtool.engine.cards import Deck
from gmtool.engine.config import Compiled, EngineConfig, engine_config

if TYPE_CHECKING:
    from gmtool.engine.ranking import Stud5Ranking
    from gmtool.engine.ranking3 import ThreeCardRanking

Ranking: TypeAlias = "Stud5Ranking | ThreeCardRanking"  # the ranking of a config's game


def deck_for(config: Compiled | EngineConfig) -> Deck:
    deck = engine_config(config).deck
    return _deck(deck.ranks, deck.suits)


@lru_cache(maxsize=32)
def _deck(ranks: tuple[str, ...], suits: tuple[str, ...]) -> Deck:
    return Deck.from_config(ranks, suits)


def stud5_ranking(config: EngineConfig) -> Stud5Ranking:
    ranking, deck = config.ranking, config.deck
    return _stud5(
        deck.ranks,
        deck.suits,
        ranking.categories,
        tie_break_of(config),
        ranking.wrap_straights,
        ranking.tie_break,
    )


def three_card_ranking(config: EngineConfig) -> ThreeCardRanking:
    ranking, deck = config.ranking, config.deck
    return _three_card(deck.ranks, deck.suits, ranking.categories, ranking.low_ace_straight)


def tie_break_of(config: EngineConfig) -> str:
    """The S6 policy a compiled stud5 config means.

    Compiled forms before schema version 2 said "ranks_then_suit" for the policy that
    compares every kicker, which RULES S6 (corrected 2026-12-01) no longer calls seed
    000's rule; such configs keep their meaning, so the hands played under them replay
    and audit as they were played (history is never rewritten).
    """
    policy = config.ranking.tie_break
    if policy == "ranks_then_suit" and config.schema_version < 2:
        return "all_ranks_then_suit"
    return cast(str, policy)  # a stud5 config has one (the compiler's default: key_then_suit)


@lru_cache(maxsize=32)
def _stud5(
    ranks: tuple[str, ...],
    suits: tuple[str, ...],
    categories: tuple[str, ...],
    tie_break: str,
    wrap: bool,
    named: str | None,
) -> Stud5Ranking:
    from gmtool.engine.ranking import Stud5Ranking

    return Stud5Ranking(_deck(ranks, suits), categories, tie_break, wrap, named=named)


@lru_cache(maxsize=32)
def _three_card(
    ranks: tuple[str, ...], suits: tuple[str, ...], categories: tuple[str, ...], low_ace: bool
) -> ThreeCardRanking:
    from gmtool.engine.ranking3 import ThreeCardRanking

    return ThreeCardRanking(_deck(ranks, suits), categories, low_ace)
