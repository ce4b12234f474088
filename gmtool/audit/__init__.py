"""Replay and verification of recorded hands, ledgers and hash chains."""
