"""Bots: how a machine player chooses among the engine's legal actions.

The engine decides what is legal and what happens; a bot only picks. Policies
(`policies.py`) turn an estimate of hand strength (`strength.py`, from the cards the bot
may see) and the pot into an action. The host's bots and the what-if simulator play the
same policies.
"""
