"""Alpha-beta baseline player: evaluation, Zobrist hashing, compiled search, openings, matches."""
