"""The hop action codec: sizes, round trips, the canonical frame's symmetry, whole moves as hops."""

import pytest

from tammi_rl.rules.actions import ActionCodec, canonical_direction, canonical_square, codec_for
from tammi_rl.rules.engine import Rules

SIZES = {"russian": 896, "brazilian": 896, "english": 256, "italian": 256, "turkish": 1792, "international": 1800}


@pytest.fixture(scope="module", params=sorted(SIZES))
def codec(request) -> ActionCodec:
    return codec_for(Rules.for_variant(request.param))


def test_action_space_size(codec):
    assert codec.n_actions == SIZES[codec.rules.variant.name]
    flying = codec.rules.variant.king_range == "flying"
    assert codec.max_distance == (codec.rules.geometry.size - 1 if flying else 2)


def test_decode_encode_round_trip(codec):
    for side in (0, 1):
        for a in range(codec.n_actions):
            h = codec.decode(side, a)
            assert codec.encode(side, h.frm, h.direction, h.distance) == a
            if h.to >= 0:
                assert codec.hop(side, h.frm, h.to) == a
                assert codec.rules.rays[h.frm, h.direction, h.distance - 1] == h.to


def test_black_is_white_rotated(codec):
    """Black's action for a hop is White's action for the hop rotated 180 degrees."""
    g = codec.rules.geometry
    n, size = g.n_squares, g.size
    for a in range(codec.n_actions):
        w, b = codec.decode(0, a), codec.decode(1, a)
        assert b.frm == n - 1 - w.frm and b.direction == 3 - w.direction and b.distance == w.distance
        assert (w.to < 0) == (b.to < 0)
        if w.to >= 0:
            assert b.to == n - 1 - w.to
            (r, c), (rb, cb) = g.coords[w.frm], g.coords[b.frm]
            assert (rb, cb) == (size - 1 - r, size - 1 - c)
        assert g.steps[b.direction] == tuple(-x for x in g.steps[w.direction])


def test_canonical_maps_are_involutions():
    for side in (0, 1):
        for sq in range(32):
            assert canonical_square(32, side, canonical_square(32, side, sq)) == sq
        for d in range(4):
            assert canonical_direction(side, canonical_direction(side, d)) == d


def test_forward_step_is_the_same_action_for_both_colours():
    rules = Rules.for_variant("russian")
    codec = codec_for(rules)
    white = codec.hop(0, rules.square("c3"), rules.square("d4"))
    black = codec.hop(1, rules.square("f6"), rules.square("e5"))
    assert white == black


def test_whole_move_as_hops():
    rules = Rules.for_variant("russian")
    codec = codec_for(rules)
    pos = rules.parse_fen("W:Wc3:Bd4,f6")
    (move,) = rules.legal_moves(pos)
    actions = codec.move_actions(0, move)
    assert [codec.hop_text(0, a) for a in actions] == ["c3:e5", "e5:g7"]


def test_flying_king_hop_distance_counts_every_square():
    rules = Rules.for_variant("russian")
    codec = codec_for(rules)
    a = codec.hop(0, rules.square("a1"), rules.square("h8"))
    h = codec.decode(0, a)
    assert h.distance == 7 and codec.hop_text(0, a, capture=False) == "a1-h8"


def test_hop_text_numeric_and_off_board():
    rules = Rules.for_variant("english")
    codec = codec_for(rules)
    a = codec.hop(1, rules.square("9"), rules.square("18"))
    assert codec.hop_text(1, a) == "9x18"
    off = codec.encode(0, rules.square("29"), 3, 1)  # SW from a corner
    assert "off the board" in codec.hop_text(0, off)


def test_bad_hops_are_rejected():
    rules = Rules.for_variant("english")
    codec = codec_for(rules)
    with pytest.raises(ValueError):
        codec.decode(0, codec.n_actions)
    with pytest.raises(ValueError):
        codec.encode(0, 0, 0, 3)
    with pytest.raises(ValueError):
        codec.hop(0, rules.square("29"), rules.square("1"))
