"""RM objects and calls: the client, host discovery, sessions, pairs, windows."""
