"""The Gymnasium env: API conformance, an exact mask, observations, ends, options, errors, rendering."""

from xml.etree import ElementTree

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import tammi_rl  # noqa: F401  (registers the ids)
from tammi_rl.env import observation as ob
from tammi_rl.env.draughts_env import DraughtsEnv, IllegalActionError
from tammi_rl.env.wrappers import OpponentWrapper
from tammi_rl.rules.errors import FenError
from tammi_rl.rules.game import REASONS, Game
from tammi_rl.rules.variant import available_variants, load_variant

VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


# --- an independent derivation of the legal hops --------------------------------------
def expected_action(rules, side, a, b):
    """The action of the hop a -> b, computed from coordinates (not the codec's tables)."""
    g = rules.geometry
    (r0, c0), (r1, c1) = g.coords[a], g.coords[b]
    dist = max(abs(r1 - r0), abs(c1 - c0))
    step = ((r1 - r0) // dist, (c1 - c0) // dist)
    d = g.steps.index(step)
    n = g.n_squares
    maxd = g.size - 1 if rules.variant.king_range == "flying" else 2
    if side == 1:
        a, d = n - 1 - a, 3 - d
    return (a * 4 + d) * maxd + dist - 1


def expected_mask(rules, position, played, n_actions):
    """Legal hops: next hops of the whole legal moves whose path starts with ``played``."""
    mask = np.zeros(n_actions, dtype=np.int8)
    k = len(played) - 1
    for move in rules.legal_moves(position):
        if k < 0 or list(move.path[: k + 1]) == played:
            i = max(k, 0)
            mask[expected_action(rules, position.side, move.path[i], move.path[i + 1])] = 1
    return mask


def expected_piece_planes(rules, position):
    """Own/opponent men/kings planes of a turn-start position, from the side to move's view."""
    g = rules.geometry
    planes = np.zeros((4, g.size, g.size), dtype=np.float32)
    me = position.side
    for sq, (r, c) in enumerate(g.coords):
        if me == 1:
            r, c = g.size - 1 - r, g.size - 1 - c
        piece = position.piece_at(sq)
        if piece:
            own = (piece.lower() == "w") == (me == 0)
            planes[(0 if own else 2) + piece.isupper(), r, c] = 1
    return planes


# --- API conformance ----------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_check_env(variant):
    # check_env steps unmasked random actions, so illegal ones must not raise here.
    env = gymnasium.make(load_variant(variant).gym_id, illegal_action="lose", render_mode="rgb_array")
    check_env(env.unwrapped, skip_render_check=False)


def test_every_variant_file_is_registered():
    for name in available_variants():
        assert load_variant(name).gym_id in gymnasium.registry


def test_make_vec():
    envs = gymnasium.make_vec("tammi/Russian-v0", num_envs=2)
    obs, info = envs.reset(seed=0)
    assert obs.shape == (2, ob.N_PLANES, 8, 8) and info["action_mask"].shape == (2, 896)
    for _ in range(20):
        actions = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
        obs, _reward, _terminated, _truncated, info = envs.step(actions)
    assert obs.shape == (2, ob.N_PLANES, 8, 8)
    envs.close()


# --- random masked play: exact mask, observations, valid ends --------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_play_mask_observation_and_results(variant):
    env = DraughtsEnv(variant, max_plies=200)
    rules = env.rules
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=1)
    played: list[int] = []
    turn_start = env.position
    steps = episodes = 0
    while steps < 2500 or episodes < 2:
        mask = info["action_mask"]
        assert mask.dtype == np.int8
        np.testing.assert_array_equal(mask, expected_mask(rules, turn_start, played, env.action_space.n))
        np.testing.assert_array_equal(env.action_masks(), mask.astype(bool))
        assert info["player"] == turn_start.side and info["to_play"] == ("white", "black")[turn_start.side]
        assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
        if not played:
            np.testing.assert_array_equal(obs[:4], expected_piece_planes(rules, turn_start))
            assert not obs[ob.CHAIN_PIECE].any() and not obs[ob.JUMPED].any()
        else:
            assert obs[ob.CHAIN_PIECE].sum() == 1 and obs[ob.JUMPED].sum() == len(played) - 1
        c = env.game.counters()
        raw = (c.no_progress_plies, c.kings_only_plies, c.three_kings_plies, c.repetitions)
        for i, (value, limit) in enumerate(zip(raw, env.encoder.limits, strict=False)):
            want = min(1.0, value / limit) if limit else 0.0
            assert obs[ob.NO_PROGRESS + i].min() == obs[ob.NO_PROGRESS + i].max() == pytest.approx(want)

        mover = env.to_play
        action = int(rng.choice(np.flatnonzero(mask)))
        hop = env.codec.decode(mover, action)
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        played = [*played, hop.to] if played else [hop.frm, hop.to]
        if env.to_play != mover or terminated or truncated:  # the whole move is done
            assert env.last_move is not None and list(env.last_move.path) == played
            played, turn_start = [], env.position
        if terminated or truncated:
            episodes += 1
            result = info["result"]
            assert result.reason in REASONS and terminated != truncated
            assert truncated == (result.reason == "adjudication")
            assert not info["action_mask"].any()
            if terminated:
                assert reward == (0.0 if result.winner is None else (1.0 if result.winner == mover else -1.0))
            else:
                assert reward == 0.0
            # The env's fast game bookkeeping agrees with a plain Game replaying the moves.
            replay = Game(rules, max_plies=200)
            for move in env.game.moves:
                replay.play(move)
            assert replay.result == result and replay.counters() == env.game.counters()
            obs, info = env.reset()
            turn_start = env.position


# --- hops and chains ----------------------------------------------------------------
def test_multi_capture_keeps_the_turn_and_shows_the_chain():
    env = DraughtsEnv("russian")
    obs, info = env.reset(options={"fen": "W:Wc3:Bd4,d6,f6,a7"})
    assert [env.action_text(a) for a in env.legal_actions()] == ["c3:e5"]
    obs, _reward, terminated, _truncated, info = env.step(env.legal_actions()[0])
    assert info["to_play"] == "white" and not terminated
    # Two captures share the first hop and then diverge.
    assert sorted(env.action_text(a) for a in env.legal_actions()) == ["e5:c7", "e5:g7"]
    assert obs[ob.CHAIN_PIECE].sum() == 1 and obs[ob.JUMPED].sum() == 1
    assert obs[ob.OPP_MEN].sum() == 4  # jumped pieces stay until the chain ends
    action = next(a for a in env.legal_actions() if env.action_text(a) == "e5:g7")
    obs, _reward, terminated, _truncated, info = env.step(action)
    assert info["to_play"] == "black" and env.last_move.captures == (env.rules.square("d4"), env.rules.square("f6"))


@pytest.mark.parametrize("variant, continues", [("russian", True), ("english", False)])
def test_promotion_in_chain(variant, continues):
    """Russian: a man crowned mid-chain goes on as a flying king; English: crowning ends the move."""
    env = DraughtsEnv(variant)
    rules = env.rules
    names = {sq: rules.square_name(sq) for sq in range(rules.geometry.n_squares)}
    sq = {(r, c): i for i, (r, c) in enumerate(rules.geometry.coords)}
    b6, c7, d8, f6 = sq[5, 1], sq[6, 2], sq[7, 3], sq[5, 5]
    fen = f"W:W{names[b6]}:B{names[c7]},{names[f6]},{names[sq[0, 0]]}"
    obs, _info = env.reset(options={"fen": fen})
    env.step(env.codec.hop(0, b6, d8))
    if continues:
        assert env.to_play == 0
        landings = sorted(env.codec.decode(0, a).distance for a in env.legal_actions())
        assert landings == [3, 4]  # d8 over f6 to g5 or h4: flying king hops
        obs, _ = env.observation_for(0)
        r, c = rules.geometry.coords[d8]
        assert obs[ob.OWN_KINGS, r, c] == 1 and obs[ob.CHAIN_PIECE, r, c] == 1
    else:
        assert env.to_play == 1 and env.last_move.promotes


def test_black_sees_the_same_start_as_white():
    env = DraughtsEnv("russian")
    white_obs, white_info = env.reset()
    fen = env.rules.fen(env.position).replace("W:", "B:", 1)
    black_obs, black_info = env.reset(options={"fen": fen})
    np.testing.assert_array_equal(white_obs, black_obs)
    np.testing.assert_array_equal(white_info["action_mask"], black_info["action_mask"])


def test_observation_for_the_other_side():
    env = DraughtsEnv("english")
    obs, _info = env.reset()
    other, mask = env.observation_for(1 - env.to_play)
    assert not mask.any()
    np.testing.assert_array_equal(other[ob.OWN_MEN], np.rot90(obs[ob.OPP_MEN], 2))


@pytest.mark.parametrize("variant", VARIANTS)
def test_square_owners_read_the_observation_planes_at_the_network_cells(variant):
    """The ownership target of each side is in the frame the network reads: at the cells of
    its per-square outputs, own pieces where that side's observation has them."""
    env = DraughtsEnv(variant)
    encoder = ob.ObservationEncoder.for_rules(env.rules)
    game = Game(env.rules)
    rng = np.random.default_rng(7)
    for _ in range(30):
        moves = game.legal_moves()
        if not moves:
            break
        game.play(moves[int(rng.integers(len(moves)))])
        owners = encoder.square_owners(game.position)
        env.reset(options={"fen": env.rules.fen(game.position)})
        assert owners.shape == (2, env.rules.geometry.n_squares)
        for side in (0, 1):
            planes = env.observation_for(side)[0].reshape(ob.N_PLANES, -1)[:, encoder.cells]
            expected = np.full(encoder.cells.shape, ob.EMPTY)
            expected[planes[ob.OWN_MEN] + planes[ob.OWN_KINGS] > 0] = ob.OWN
            expected[planes[ob.OPP_MEN] + planes[ob.OPP_KINGS] > 0] = ob.OPPONENT
            np.testing.assert_array_equal(owners[side], expected)
        pieces = bin(game.position.occupied).count("1")
        assert (owners != ob.EMPTY).sum(axis=1).tolist() == [pieces, pieces]


# --- options and errors ---------------------------------------------------------------
def test_illegal_action_raises_naming_the_action_and_the_legal_ones():
    env = DraughtsEnv("russian")
    env.reset()
    bad = env.codec.hop(0, env.rules.square("a1"), env.rules.square("b2"))
    with pytest.raises(IllegalActionError) as err:
        env.step(bad)
    text = str(err.value)
    assert f"action {bad} (a1-b2)" in text and "legal actions:" in text and "c3-d4" in text
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(10_000)


def test_illegal_action_lose():
    env = DraughtsEnv("english", illegal_action="lose")
    _, info = env.reset()
    _obs, reward, terminated, _truncated, info = env.step(0)
    assert reward == -1.0 and terminated and info["illegal_action"]
    assert info["result"].winner == 0  # Black moved first and lost
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_bad_fen_is_a_fen_error():
    env = DraughtsEnv("russian")
    with pytest.raises(FenError):
        env.reset(options={"fen": "W:Wz9:Bc3"})
    with pytest.raises(FenError):
        DraughtsEnv("russian", opening_fen="nonsense")
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"fne": "W:Wc3:Bd4"})


def test_opening_options():
    env = gymnasium.make("tammi/Russian-v0", opening_fen="B:Wc3:Bf6").unwrapped
    _obs, info = env.reset()
    assert info["to_play"] == "black" and env.rules.fen(env.position) == "B:Wc3:Bf6"
    env = DraughtsEnv("russian", random_opening_plies=6)
    env.reset(seed=3)
    first = env.rules.fen(env.position)
    assert len(env.game.moves) == 6
    env.reset(seed=3)
    assert env.rules.fen(env.position) == first
    env.reset(seed=4)
    assert env.rules.fen(env.position) != first or True  # seeds may coincide; must not fail


def test_length_cap_truncates_with_adjudication():
    env = DraughtsEnv("english", max_plies=4)
    _obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    while True:
        _obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            break
    assert truncated and not terminated and reward == 0.0
    assert info["result"].reason == "adjudication" and len(env.game.moves) == 4


def test_no_result_before_the_first_reset():
    env = DraughtsEnv("russian")
    assert env.result is None


def test_no_moves_at_start_is_decided_at_reset():
    env = DraughtsEnv("russian")
    _obs, info = env.reset(options={"fen": "W:Wa1:Bb2,c3"})
    assert info["result"].winner == 1 and not info["action_mask"].any()


# --- rendering ---------------------------------------------------------------------------
def test_render_modes():
    env = DraughtsEnv("russian", render_mode="ansi")
    env.reset(options={"fen": "W:Wc3:Bd4,d6,f6"})
    env.step(env.legal_actions()[0])
    text = env.render()
    assert "a  b  c  d  e  f  g  h" in text and text.splitlines()[0].strip().startswith("8")
    assert "<w>" in text and "[b]" in text and "must continue" in text
    env.render_mode = "rgb_array"
    img = env.render()
    assert img.shape == (320, 320, 3) and img.dtype == np.uint8
    env.render_mode = "svg"
    root = ElementTree.fromstring(env.render())
    assert root.tag.endswith("svg")
    assert ElementTree.fromstring(env._repr_svg_()) is not None
    intl = DraughtsEnv("international", render_mode="rgb_array")
    intl.reset()
    assert intl.render().shape == (400, 400, 3)


def test_board_svg_for_positions():
    from tammi_rl.env.render import board_svg

    env = DraughtsEnv("english")
    env.reset()
    board = board_svg(env.rules, env.position)
    assert ElementTree.fromstring(board._repr_svg_()).tag.endswith("svg")
    assert "29=a1" in str(board)


# --- single-agent wrapper ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["random", "player", "rules_position", "env"])
def test_opponent_wrapper(kind):
    from tammi_rl.players import RandomPlayer

    opponents = {
        "random": "random",
        "player": RandomPlayer(seed=1),
        "rules_position": lambda rules, position: rules.legal_moves(position)[-1],
        "env": lambda env: env.legal_actions()[0],
    }
    env = OpponentWrapper(DraughtsEnv("russian"), opponent=opponents[kind], agent_color="black")
    rng = np.random.default_rng(0)
    for episode in range(3):
        _obs, info = env.reset(seed=episode)
        while True:
            assert info["to_play"] == "black" and info["agent"] == "black"
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _obs, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                result = info["result"]
                assert reward == (0.0 if truncated or result.winner is None else (1.0 if result.winner == 1 else -1.0))
                break


def test_opponent_wrapper_with_alpha_beta():
    from tammi_rl.alphabeta.driver import AlphaBetaConfig
    from tammi_rl.players import AlphaBetaPlayer

    env = OpponentWrapper(
        DraughtsEnv("english", max_plies=30),
        opponent=AlphaBetaPlayer(DraughtsEnv("english").rules, AlphaBetaConfig(depth=2)),
        agent_color="random",
    )
    _obs, _info = env.reset(seed=0)
    steps = 0
    while True:
        _obs, _reward, terminated, truncated, _info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        steps += 1
        if terminated or truncated:
            break
    assert steps > 0


def test_made_env_exposes_action_masks():
    """sb3-contrib calls env.action_masks() on what gymnasium.make returns."""
    env = gymnasium.make("tammi/Russian-v0")
    _, info = env.reset(seed=0)
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])


def test_turkish_chain_shows_captured_pieces_gone():
    """Turkish removes each captured piece at once (the "Turkish strike"): mid-chain the jumped
    man is already off the opponent's plane, while the JUMPED plane still marks it."""
    env = DraughtsEnv("turkish")
    obs, _ = env.reset(options={"fen": "W:Wd2:Bd3,d5,h7"})
    assert obs[ob.OPP_MEN].sum() == 3
    assert [env.action_text(a) for a in env.legal_actions()] == ["d2:d4"]
    obs, _, terminated, _, info = env.step(env.legal_actions()[0])
    assert info["to_play"] == "white" and not terminated  # the chain goes on over d5
    assert obs[ob.OPP_MEN].sum() == 2 and obs[ob.JUMPED].sum() == 1 and obs[ob.CHAIN_PIECE].sum() == 1
    jumped = np.argwhere(obs[ob.JUMPED] == 1)[0]
    assert obs[ob.OPP_MEN][tuple(jumped)] == 0
