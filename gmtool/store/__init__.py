"""The SQLite store: schema and migrations, repositories, the per-table event hash chain.

Coins move only through ledger rows; a hand's settlement, its ledger rows, the players'
balances and the hand's end land in one transaction or not at all.
"""
