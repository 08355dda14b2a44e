"""Repetition inside the search tree (``mcts.repetition_draws``, ``eval.repetition_draws``): a
position that repeats one on its path, or one of the game's since its last irreversible move,
is a terminal draw when switched on, and nothing changes when off."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.config import EvalConfig, MCTSConfig
from tammi_rl.mcts import tree as tr
from tammi_rl.mcts.search import BatchedSearch, RootState, uniform_evaluator
from tammi_rl.players import parse_player_spec
from tammi_rl.players.spec import PlayerSpecError
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import parse_move

KINGS = "W:WKc1,g1:BKb8,f8"
"""Two kings that can walk to and fro, and a man each that the walk leaves alone."""


def shuffled(rules: Rules, moves: list[str], fen: str = KINGS) -> Game:
    game = Game(rules, start=rules.parse_fen(fen))
    for text in moves:
        game.play(parse_move(rules, game.position, text))
    return game


def search(rules: Rules, game: Game, on: bool, sims: int = 200) -> BatchedSearch:
    cfg = MCTSConfig(algorithm="puct", play_forced_hops=False, repetition_draws=on)
    s = BatchedSearch(rules, cfg, max_trees=1, max_simulations=sims)
    s.run([RootState.of_game(game)], uniform_evaluator(s.codec.n_actions), sims, False, np.random.default_rng(0))
    return s


def root_children(s: BatchedSearch) -> dict[int, int]:
    """Hop action -> child node of the root (created children only)."""
    first, n = s.nodes_i[0, 0, tr.NI_FIRST_EDGE], s.nodes_i[0, 0, tr.NI_N_EDGES]
    edges = s.edges_i[0, first : first + n]
    return {int(e[tr.EI_ACTION]): int(e[tr.EI_CHILD]) for e in edges if e[tr.EI_CHILD] >= 0}


def position(s: BatchedSearch, node: int) -> tuple[int, ...]:
    return (*s.nodes_i[0, node, tr.NI_BOARD : tr.NI_BOARD_END], s.nodes_i[0, node, tr.NI_SIDE])


def test_the_root_carries_the_games_reversible_history(russian):
    game = shuffled(russian, ["c1-d2", "b8-a7", "d2-c1", "a7-b8"])
    root = RootState.of_game(game)
    assert root.repetition == 2
    assert root.history == tuple(p.as_int64() for p in game.positions[:-1])  # no irreversible move yet
    assert root.history[0] == root.board  # the start position, which stands here again
    assert RootState.of_game(game, history=False).history == ()  # for a search blind to repetition
    game.play(parse_move(russian, game.position, "g1-h2"))  # a man move: nothing before it can repeat
    assert RootState.of_game(game).history == ()


def test_a_move_back_into_the_games_history_is_a_draw_when_on(russian):
    game = shuffled(russian, ["c1-d2", "b8-a7", "d2-c1", "a7-b8"])
    back = parse_move(russian, game.position, "c1-d2")  # to the position the history holds after ply 1
    off, on = search(russian, game, False), search(russian, game, True)
    seen = []
    for s in (off, on):
        game_after = game.copy()
        game_after.play(back)
        children = root_children(s)
        node = [c for c in children.values() if position(s, c) == game_after.position.as_int64()]
        assert len(node) == 1
        seen.append((s.nodes_i[0, node[0], tr.NI_TERMINAL], s.nodes_f[0, node[0], tr.NF_TERMINAL_VALUE]))
    assert seen == [(0, 0.0), (1, 0.0)]  # off: searched on; on: a draw, worth 0
    # Every other root child is a position the game has not seen: not terminal either way.
    for s in (off, on):
        others = [c for c in root_children(s).values() if s.nodes_i[0, c, tr.NI_TERMINAL]]
        assert len(others) == (s is on)


def chain(rules: Rules, moves: list[str], fen: str = KINGS):
    """A hand-made tree path: the start of ``fen`` as the root, then one node per move in ``moves``
    (each at the start of a turn); returns the tree arrays and the game that played them."""
    game = Game(rules, start=rules.parse_fen(fen))
    nodes_i, _, _, _, trees_i = tr.allocate(1, len(moves) + 1, 1)
    for i in range(len(moves) + 1):
        if i:
            game.play(parse_move(rules, game.position, moves[i - 1]))
        board = game.position.as_int64()
        nodes_i[0, i, tr.NI_BOARD : tr.NI_BOARD_END] = board[:4]
        nodes_i[0, i, tr.NI_SIDE] = board[4]
        nodes_i[0, i, tr.NI_PARENT] = i - 1
    trees_i[0, tr.TI_N_NODES] = len(moves) + 1
    return nodes_i, trees_i, game


def test_a_position_repeated_on_the_path_is_found_and_one_before_a_capture_is_not(russian):
    nodes_i, trees_i, _ = chain(russian, ["c1-d2", "b8-a7", "d2-c1", "a7-b8", "c1-d2", "b8-a7"])
    found = [tr._repeats(nodes_i, trees_i, 0, n) for n in range(1, 7)]
    assert found == [False, False, False, True, True, True]  # nodes 4, 5, 6 repeat nodes 0, 1, 2
    # A capture changes the count of pieces: the walk up stops there, as nothing before it can recur.
    nodes_i[0, 1, tr.NI_BOARD + 2] = 0  # node 1 without Black's man, as if it was captured after it
    assert not tr._repeats(nodes_i, trees_i, 0, 4)  # the root, beyond node 1, is not reached
    assert tr._repeats(nodes_i, trees_i, 0, 6)  # node 2, before node 1, still is


def test_turkish_men_stepping_sideways_repeat_and_the_search_sees_it(turkish):
    """Turkish men step sideways, so a position can recur with every man on the board."""
    moves = ["a3-a4", "h6-h5", "a4-b4", "h5-g5", "b4-a4", "g5-h5"]
    game = Game(turkish)
    for text in moves:
        game.play(parse_move(turkish, game.position, text))
    assert game.counters().repetitions == 2 and len(RootState.of_game(game).history) == 6
    again = game.copy()
    again.play(parse_move(turkish, again.position, "a4-b4"))  # the position after the third move
    for on in (False, True):
        s = search(turkish, game, on, sims=64)
        node = [c for c in root_children(s).values() if position(s, c) == again.position.as_int64()]
        assert len(node) == 1 and s.nodes_i[0, node[0], tr.NI_TERMINAL] == on


def test_history_is_capped_at_its_newest_positions():
    row = np.full(tr.R_COUNT, -1, np.int64)
    history = [(i, 0, 0, 0, i % 2) for i in range(tr.MAX_HISTORY + 5)]
    tr.write_root(row, (1, 2, 3, 4), 0, (), (0, 0, 0), 1, history)
    assert row[tr.R_N_HISTORY] == tr.MAX_HISTORY
    kept = row[tr.R_HISTORY : tr.R_HISTORY_END].reshape(tr.MAX_HISTORY, tr.HISTORY_FIELDS)
    assert [tuple(r) for r in kept] == history[5:]
    with pytest.raises(ValueError, match="4 bitboards and the side to move"):
        tr.write_root(row, (1, 2, 3, 4), 0, (), (0, 0, 0), 1, [(1, 2, 3)])


def test_the_switch_reaches_the_search_from_config_and_player_spec(russian):
    assert MCTSConfig().repetition_draws is False  # the self-play recipe as measured
    assert EvalConfig().repetition_draws is True  # the agent's play: measured, and on
    play = EvalConfig(repetition_draws=True).play_search(MCTSConfig())
    assert play.repetition_draws is True
    s = BatchedSearch(russian, play, max_trees=1, max_simulations=8)
    assert s.params[tr.SP_REPETITION_DRAWS] == 1.0
    agent = parse_player_spec("mcts:model=russian,sims=8", russian)  # from before the key: today's default
    assert agent.search.params[tr.SP_REPETITION_DRAWS] == 1.0
    agent = parse_player_spec("mcts:model=russian,sims=8,repetition=off", russian)
    assert agent.search.params[tr.SP_REPETITION_DRAWS] == 0.0
    with pytest.raises(PlayerSpecError, match="repetition must be on or off"):
        parse_player_spec("mcts:model=russian,repetition=maybe", russian)
