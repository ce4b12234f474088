"""The player gateway (issue 25): how people reach the tables over a network.

- ``protocol``: the player protocol's messages, read strictly from hostile frames
  (docs/protocol.md; the JSON Schemas in ``schemas/`` describe the same messages).
- ``views``: what one connection may see of a hand's events (RULES G3).
- ``tokens``: player tokens, EdDSA JWTs bound to one store, checked on the host's clock.
"""
