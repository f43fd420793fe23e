"""Stand-in for Hermes Agent v0.19.0's ``tools`` package (tests only; see ../README.md)."""
