"""The alpha-beta baseline: a compiled principal-variation search over whole moves.

Modules: `evaluation` (the hand-written material and position evaluation: the baseline
only, never inside a learning agent), `zobrist` (position hashing), `core` (the compiled
search) and `driver` (`AlphaBeta`, `AlphaBetaConfig`, `AlphaBetaResult`: iterative deepening
and time control in Python around the core).
"""
