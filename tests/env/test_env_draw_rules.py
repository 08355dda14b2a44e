"""The compiled end and draw rules agree with an independent pure-Python reference.

Games from the start and from random endgames (kings only, three kings v one, king v
lone man, kings and men) under three move policies: random; "shuffle", which undoes
its own last move to provoke repetitions; and "careful", which avoids offering a
capture and repeating a position, so the slow rules (kings only, three kings v one,
no progress) get to fire. After every whole move the env's counters must equal both
its `Game` record's and the reference's (`reference_draw_rules.ReferenceGame`), and the
results must be equal. Every draw rule a variant has must fire somewhere, so none of
them goes untested.
"""

from collections import Counter

import numpy as np
import pytest
from support.reference_draw_rules import ReferenceGame

from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg
from tammi_rl.rules.position import Position, from_int64
from tammi_rl.rules.variant import load_variant

VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


def random_endgame(rules, rng, white_kings, white_men, black_kings, black_men):
    """A random position with the given material; men never stand on their promotion row."""
    n = rules.geometry.n_squares
    far = [from_int64(rules.params[mg.P_FAR_ROW + side]) for side in (0, 1)]
    order = [int(s) for s in rng.permutation(n)]
    boards = [0, 0, 0, 0]  # white men, white kings, black men, black kings
    for board, count, side, is_man in (
        (1, white_kings, 0, False),
        (0, white_men, 0, True),
        (3, black_kings, 1, False),
        (2, black_men, 1, True),
    ):
        placed = 0
        for sq in list(order):
            if placed == count:
                break
            if is_man and far[side] >> sq & 1:
                continue
            boards[board] |= 1 << sq
            order.remove(sq)
            placed += 1
    return Position(*boards, side=int(rng.integers(2)))


def careful_moves(rules, position, moves, seen):
    """The moves that neither offer the opponent a capture nor reach a position seen before."""
    safe = []
    for move in moves:
        after = rules.play(position, move)
        if after.key() not in seen and not any(m.captures for m in rules.legal_moves(after)):
            safe.append(move)
    return safe


def play_and_compare(env, rng, policy: str = "random") -> str:
    """Play one game to its end, comparing the env with its `Game` record after every move."""
    previous: dict[int, tuple[int, ...]] = {}
    seen = {env.position.key()}
    reference = ReferenceGame(env.rules, env.position, env.max_plies)
    assert env.result == reference.result
    while env.result is None:
        position = env.position
        moves = env.rules.legal_moves(position)
        if policy == "careful":
            moves = careful_moves(env.rules, position, moves, seen) or moves
        move = moves[int(rng.integers(len(moves)))]
        if policy == "shuffle" and position.side in previous:  # undo this side's last move when possible
            back = next((m for m in moves if m.path == previous[position.side][::-1]), None)
            move = back or move
        previous[position.side] = move.path
        for action in env.codec.move_actions(position.side, move):
            env.step(action)
        reference.play(move)
        c = env.game.counters()
        assert env.counters == (c.no_progress_plies, c.kings_only_plies, c.three_kings_plies, c.repetitions)
        assert env.counters == reference.counters()
        assert env.game.result == env.result == reference.result
        assert env.position == env.game.position
        seen.add(env.position.key())
    return env.result.reason


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_compiled_draw_rules_match_game(variant):
    env = DraughtsEnv(variant, max_plies=160)
    rng = np.random.default_rng(7)
    reasons: Counter[str] = Counter()
    materials = [
        (1, 0, 1, 0),
        (2, 0, 1, 0),
        (3, 0, 1, 0),
        (4, 0, 1, 0),
        (3, 1, 1, 0),
        (1, 0, 0, 1),
        (0, 1, 1, 0),
        (2, 2, 2, 2),
        (2, 1, 2, 1),
        (1, 3, 1, 3),
    ]
    policies = ["random", "shuffle", "careful"]
    env.reset(seed=0)
    for game in range(6):  # from the start
        env.reset()
        reasons[play_and_compare(env, rng, policies[game % 3])] += 1
    for game in range(60):  # random endgames
        position = random_endgame(env.rules, rng, *materials[game % len(materials)])
        env.reset(options={"fen": env.rules.fen(position)})
        reasons[play_and_compare(env, rng, policies[game % 3])] += 1
    capped = DraughtsEnv(variant, max_plies=12)  # the length cap and the variant's adjudication
    for game in range(4):
        capped.reset(seed=game)
        reasons[play_and_compare(capped, rng, "careful")] += 1
    draw = env.variant.draw
    rules_present = {
        "repetition": draw.repetition > 0,
        "no_progress": draw.no_progress_moves > 0,
        "kings_only": draw.kings_only_moves > 0,
        "three_kings_vs_one": draw.three_kings_vs_one_moves > 0,
        "king_vs_lone_man": draw.king_vs_lone_man != "play",
    }
    for reason, present in rules_present.items():
        assert (reasons[reason] > 0) == present, (reason, dict(reasons))
    assert reasons["no_moves"] > 0 and reasons["adjudication"] > 0, dict(reasons)


def test_repetition_table_grows_without_a_cap():
    """With no length cap the repetition table starts small and grows as positions pile up."""
    env = DraughtsEnv("english", max_plies=0)
    rng = np.random.default_rng(3)
    env.reset(options={"fen": env.rules.fen(random_endgame(env.rules, rng, 3, 0, 3, 0))})
    env._history = env._history[:2].copy()  # force growth from the first moves on
    reason = play_and_compare(env, rng, "careful")
    assert reason in ("repetition", "no_progress", "no_moves")
    assert env._history.shape[0] > 2


def test_decide_order_and_params():
    """Spot checks of the compiled decision order (no moves, king v man, repetition, ...)."""
    dp = dr.draw_params(load_variant("russian"), max_plies=10)
    board = np.array([0, 1 << 3, 0, 1 << 20], np.int64)  # one king each: kings only
    counters = np.array([0, 30, 0], np.int64)
    assert dr.decide(board, 0, 5, counters, 1, 3, dp) == (dr.DRAWN, dr.R_KINGS_ONLY)
    assert dr.decide(board, 0, 5, counters, 3, 3, dp) == (dr.DRAWN, dr.R_REPETITION)  # repetition first
    assert dr.decide(board, 1, 0, counters, 3, 3, dp) == (0, dr.R_NO_MOVES)  # no moves before all
    assert dr.decide(board, 0, 5, np.zeros(3, np.int64), 1, 10, dp) == (dr.DRAWN, dr.R_ADJUDICATION)
    assert dr.decide(board, 0, 5, np.zeros(3, np.int64), 1, 9, dp)[0] == dr.ONGOING
    english = dr.draw_params(load_variant("english"), max_plies=None)
    assert english[dr.DP_NO_PROGRESS] == 80 and english[dr.DP_MAX_PLIES] == -1
    assert english[dr.DP_ADJUDICATION] == 1 and english[dr.DP_MAN_IRREVERSIBLE] == 1
    assert dr.draw_params(load_variant("turkish"), 5)[dr.DP_MAN_IRREVERSIBLE] == 0  # men move sideways
