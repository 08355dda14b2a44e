"""The alpha-beta baseline: a compiled principal-variation search over whole moves.

Modules: `heuristic` (the hand-written static evaluation, material and position: the
baseline only, never inside a learning agent), `zobrist` (position hashing), `core` (the
compiled search) and `driver` (`AlphaBeta`, `AlphaBetaConfig`, `AlphaBetaResult`: iterative
deepening and time control in Python around the core).
"""
