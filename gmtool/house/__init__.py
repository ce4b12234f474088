"""The table host: live tables played by bots into the store, GM commands, crash recovery."""
