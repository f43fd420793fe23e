"""Stand-in for Hermes Agent v0.19.0's ``gateway`` package (tests only; see ../README.md)."""
