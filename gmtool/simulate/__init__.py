"""What-if simulation of rule profiles (`gmtool rules simulate`): bots play the engine.

The engine's fourth driver (docs/architecture.md, "One engine, five drivers"): bots of the named
policies (`bots/policies`) play thousands of hands of each tier of a profile, or of two
profiles on the same decks and seats, and the measures an operator tunes by (pots, hand
length, showdowns, all-ins, escapes, coins by seat and banker, hands until a player who
sat with the minimum holding is out) are estimated from them, with paired confidence
intervals for a comparison. No store, no clock: every hand is a pure function of the
seed, the tier and its index, so the report is the same for any number of processes.

- `setup`: options, and the plan of each (profile, tier) to play.
- `play`: one hand, and one run of a player sitting with the minimum holding.
- `run`: the hands of every plan, in chunks, in one process or several.
- `stats`, `measures`, `compare`: statistics, the measures of a tier, paired changes.
- `gates`: `--fail-if` bounds for CI.  `plot`: the PNG (the optional `plot` extra).
"""
