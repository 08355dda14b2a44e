"""`has_capture` and `has_quiet_move` (the search's cheap leaf tests) agree with `generate_moves`."""

import numpy as np
import pytest

from tammi_rl.rules import movegen as mg
from tammi_rl.rules.engine import Rules

VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_predicates_match_the_generator_over_random_games(variant):
    rules = Rules.for_variant(variant)
    rng = np.random.default_rng(11)
    buf = np.zeros((mg.MAX_MOVES, mg.N_FIELDS), np.int64)
    seen_capture = seen_quiet = seen_stuck_side = 0
    for _ in range(40):
        position = rules.start_position()
        for _ in range(150):
            board = position.as_int64()
            for side in (0, 1):  # both sides, so positions where the side NOT to move is stuck count too
                n = mg.generate_moves(*board[:4], side, rules.rays, rules.params, buf)
                captures = n > 0 and buf[0, mg.F_NCAP] > 0
                assert mg.has_capture(*board[:4], side, rules.rays, rules.params) == captures
                if not captures:
                    assert mg.has_quiet_move(*board[:4], side, rules.rays, rules.params) == (n > 0)
                    seen_quiet += n > 0
                    seen_stuck_side += n == 0
                seen_capture += captures
            moves = rules.legal_moves(position)
            if not moves:
                break
            position = rules.play(position, moves[int(rng.integers(len(moves)))])
    assert seen_capture > 100 and seen_quiet > 100 and seen_stuck_side > 0
