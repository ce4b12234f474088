"""Evidence: the Merkle log, signed checkpoints and keys (stdlib and `cryptography` only)."""
