"""The pure rules engine: cards, hand ranking, deck shuffling with commitments.

Everything in this package is a pure function of its inputs (docs/rules.md, docs/architecture.md
"Engine contract"): no I/O, no clock and no randomness except from a seed it is
given, so live play, replay and audit all reach the same result byte for byte.
Only the standard library is imported here.

- ``cards``: ``Card`` and ``Deck`` (parsing "AS KS QS JS TS", names for explanations).
- ``ranking``: ``Stud5Ranking`` for five-card showhand (RULES S1-S7).
- ``ranking3``: ``ThreeCardRanking`` for Suihua three-card (RULES H9-H10).
- ``odds``: exact category counts and the rarer-ranks-lower notes (RULES S3).
- ``deck``: the HMAC-SHA256 Fisher-Yates shuffle, its commitment and verification.
"""
