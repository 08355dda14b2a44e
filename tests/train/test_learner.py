"""Learner: masked policy loss, WDL value loss, optimisers and schedules."""

import copy
import itertools
import math

import numpy as np
import pytest
import torch

from tammi_rl.config import NetworkConfig, TrainConfig
from tammi_rl.nn.model import build_model
from tammi_rl.selfplay.samples import MAX_LEGAL, SampleBatch
from tammi_rl.train.learner import (
    AUXILIARY_OUTPUTS,
    Learner,
    WeightAverage,
    dense_targets,
    masked_log_softmax,
    ownership_loss,
    policy_value_loss,
    short_value_loss,
    surprise_weights,
    value_targets,
    weight_norm,
)

TINY = NetworkConfig(blocks=1, channels=16, value_hidden=16)


def random_batch(n: int, n_actions: int, seed: int = 0) -> SampleBatch:
    rng = np.random.default_rng(seed)
    obs = (rng.random((n, 11, 8, 8)) < 0.2).astype(np.float32)
    legal = np.full((n, MAX_LEGAL), -1, np.int32)
    policy = np.zeros((n, MAX_LEGAL), np.float32)
    for i in range(n):
        k = int(rng.integers(2, 9))
        legal[i, :k] = rng.choice(n_actions, size=k, replace=False)
        p = rng.random(k) ** 3
        policy[i, :k] = p / p.sum()
    outcome = rng.integers(0, 3, size=n).astype(np.int64)
    value = rng.uniform(-1, 1, size=n).astype(np.float32)
    surprise = rng.exponential(0.3, size=n).astype(np.float32)
    ownership = rng.integers(0, 3, (n, 32)).astype(np.int8)
    short_value = rng.uniform(-1, 1, n).astype(np.float32)
    reply_legal, reply_policy = np.roll(legal, 1, axis=0), np.roll(policy, 1, axis=0)
    reply_legal[::4] = -1  # some samples have no stored reply
    return SampleBatch(obs, legal, policy, outcome, value, surprise, ownership, short_value, reply_legal, reply_policy)


def test_dense_targets_scatter():
    legal = torch.tensor([[3, 0, -1, -1], [-1, -1, -1, -1], [5, 1, 2, -1]])
    policy = torch.tensor([[0.25, 0.75, 0, 0], [0, 0, 0, 0], [0.5, 0.25, 0.25, 0]])
    mask, target = dense_targets(legal, policy, 6)
    assert mask.tolist() == [
        [True, False, False, True, False, False],
        [False] * 6,
        [False, True, True, False, False, True],
    ]
    assert target[0].tolist() == [0.75, 0, 0, 0.25, 0, 0]
    assert target[2].tolist() == [0, 0.25, 0.25, 0, 0, 0.5]
    assert target[1].sum() == 0


def test_masked_policy_never_puts_mass_on_illegal_actions(russian):
    model = build_model(russian, TINY)
    batch = random_batch(16, model.n_actions, seed=1)
    logits, _ = model(torch.as_tensor(batch.obs))
    logits = logits + 100.0 * torch.randn_like(logits)  # illegal actions with huge logits too
    mask, _ = dense_targets(torch.as_tensor(batch.legal), torch.as_tensor(batch.policy), model.n_actions)
    probs = masked_log_softmax(logits, mask).exp()
    assert torch.all(probs[~mask] == 0)
    torch.testing.assert_close(probs.sum(1), torch.ones(16))


def test_loss_values_match_definition():
    legal = torch.tensor([[0, 2, -1]])
    policy = torch.tensor([[0.5, 0.5, 0.0]])
    logits = torch.tensor([[0.0, 50.0, 0.0, 7.0]])  # actions 1 and 3 are illegal
    wdl = torch.tensor([[0.0, 0.0, 0.0]])
    loss, m = policy_value_loss(logits, wdl, {"legal": legal, "policy": policy, "outcome": torch.tensor([1])}, 2.0)
    assert m["loss/policy"] == pytest.approx(math.log(2))  # uniform over the two legal actions
    assert m["loss/value"] == pytest.approx(math.log(3))
    assert m["loss/total"] == pytest.approx(math.log(2) + 2 * math.log(3))
    assert m["policy/entropy"] == pytest.approx(math.log(2))
    assert float(loss) == pytest.approx(m["loss/total"])


def test_surprise_weights_keep_the_mean_and_favour_surprising_samples():
    surprise = torch.tensor([0.0, 1.0, 3.0, float("nan")])
    w = surprise_weights(surprise, 0.5)
    # mean surprise of the measured three: 4/3; weight 0.5 + 0.5 * s / (4/3)
    torch.testing.assert_close(w, torch.tensor([0.5, 0.5 + 0.375, 0.5 + 1.125, 1.0]))
    assert float(w[:3].mean()) == pytest.approx(1.0)
    assert torch.equal(surprise_weights(surprise, 0.0), torch.ones(4))
    assert torch.equal(surprise_weights(torch.full((3,), float("nan")), 0.5), torch.ones(3))  # old samples
    assert torch.equal(surprise_weights(torch.zeros(3), 1.0), torch.ones(3))  # nothing surprised the net


def test_weighted_loss_is_the_weighted_mean_of_the_per_sample_losses():
    legal = torch.tensor([[0, 1], [0, 1], [-1, -1]])  # the third sample is value-only
    policy = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    logits = torch.tensor([[0.0, 0.0], [0.0, math.log(3.0)], [0.0, 0.0]])
    wdl = torch.zeros(3, 3)
    wdl[0, 0] = math.log(2.0)
    batch = {"legal": legal, "policy": policy, "outcome": torch.tensor([0, 0, 1])}
    weight = torch.tensor([3.0, 1.0, 2.0])
    _, m = policy_value_loss(logits, wdl, batch, 1.0, 0.0, weight)
    policy_ce = torch.tensor([math.log(2.0), -math.log(0.75)])
    value_ce = torch.tensor([-math.log(0.5), math.log(3.0), math.log(3.0)])
    assert m["loss/policy"] == pytest.approx(float((policy_ce * weight[:2]).sum() / 4.0))
    assert m["loss/value"] == pytest.approx(float((value_ce * weight).sum() / 6.0))
    _, even = policy_value_loss(logits, wdl, batch, 1.0, 0.0, torch.ones(3))
    _, plain = policy_value_loss(logits, wdl, batch, 1.0, 0.0)
    assert even == plain


def test_value_targets_blend_outcome_and_search_value():
    outcome = torch.tensor([0, 1, 2])  # WIN, DRAW, LOSS
    q = torch.tensor([-1.0, 0.5, 0.0])
    pure = value_targets(outcome, q, 0.0)
    assert torch.equal(pure, torch.eye(3))
    half = value_targets(outcome, q, 0.5)
    expected = torch.tensor([[0.5, 0.0, 0.5], [0.25, 0.75, 0.0], [0.0, 0.5, 0.5]])
    assert torch.allclose(half, expected)
    assert torch.allclose(half.sum(1), torch.ones(3))
    # the target's expectation (win - loss) is the blend of outcome value and search value
    z = torch.tensor([1.0, 0.0, -1.0])
    assert torch.allclose(half[:, 0] - half[:, 2], 0.5 * z + 0.5 * q)
    with pytest.raises(ValueError, match="search values"):
        value_targets(outcome, None, 0.5)


def test_search_weighted_value_loss_is_soft_cross_entropy():
    wdl = torch.tensor([[2.0, 0.0, -1.0]])
    batch = {
        "legal": torch.tensor([[0]]),
        "policy": torch.tensor([[1.0]]),
        "outcome": torch.tensor([2]),
        "value": torch.tensor([0.6]),
    }
    _, m = policy_value_loss(torch.zeros(1, 2), wdl, batch, 1.0, value_search_weight=0.5)
    logp = torch.log_softmax(wdl, 1)[0]
    target = torch.tensor([0.3, 0.2, 0.5])
    assert m["loss/value"] == pytest.approx(float(-(target * logp).sum()), rel=1e-5)


def test_value_only_sample_adds_no_policy_loss():
    legal = torch.tensor([[0, 1], [-1, -1]])
    policy = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    logits = torch.zeros(2, 3)
    _, m = policy_value_loss(
        logits, torch.zeros(2, 3), {"legal": legal, "policy": policy, "outcome": torch.tensor([0, 2])}, 1.0
    )
    assert math.isfinite(m["loss/total"])
    assert m["loss/policy"] == pytest.approx(math.log(2))


@pytest.mark.parametrize("optimizer, precision", [("adamw", "fp32"), ("sgd", "fp32"), ("adamw", "bf16")])
def test_fits_a_fixed_batch(russian, optimizer, precision):
    torch.manual_seed(0)
    model = build_model(russian, TINY)
    lr = 1e-2 if optimizer == "adamw" else 0.1
    cfg = TrainConfig(
        optimizer=optimizer, lr=lr, lr_schedule="constant", batch_size=16, weight_decay=0.0, precision=precision
    )
    learner = Learner(model, cfg)
    batch = random_batch(16, model.n_actions, seed=2)
    first = learner.step(batch)
    for _ in range(29):
        last = learner.step(batch)
    assert last["loss/policy"] < 0.7 * first["loss/policy"]
    assert last["loss/value"] < 0.7 * first["loss/value"]
    assert last["value/accuracy"] > first["value/accuracy"]
    assert learner.step_count == 30
    for key in ("loss/total", "policy/entropy", "train/lr", "train/grad_norm"):
        assert math.isfinite(last[key])


def test_weight_norm_is_the_decayed_parameters_norm_and_decay_holds_it(russian):
    """``train/weight_norm`` covers the kernels and weight matrices only (what weight decay acts
    on); AdamW's decoupled decay keeps it below a run without decay, step for step."""
    torch.manual_seed(0)
    model = build_model(russian, TINY)
    expected = math.sqrt(sum(float((p.detach() ** 2).sum()) for p in model.parameters() if p.ndim > 1))
    assert weight_norm(model) == pytest.approx(expected, rel=1e-6)
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(1.0)  # biases and norm scales do not count
    assert weight_norm(model) == pytest.approx(expected, rel=1e-6)
    batch = random_batch(16, model.n_actions, seed=3)
    norms = {}
    for decay in (0.0, 0.5):
        torch.manual_seed(0)
        learner = Learner(
            build_model(russian, TINY), TrainConfig(lr=1e-2, lr_schedule="constant", batch_size=16, weight_decay=decay)
        )
        for _ in range(20):
            learner.step(batch)
        norms[decay] = weight_norm(learner.model)
    # 20 steps at lr 0.01 and decay 0.5 shrink each decayed weight by (1 - 0.005)^20, about 0.90x
    assert norms[0.5] < 0.95 * norms[0.0]


def test_cosine_schedule_follows_progress_and_state_round_trips(russian):
    model = build_model(russian, TINY)
    cfg = TrainConfig(lr=1e-2, lr_schedule="cosine", batch_size=8)
    learner = Learner(model, cfg)
    batch = random_batch(8, model.n_actions)
    lrs = []
    for progress in (0.0, 0.2, 0.4, 0.5):
        learner.set_progress(progress)
        lrs.append(learner.step(batch)["train/lr"])
    assert lrs[0] == pytest.approx(1e-2)
    assert all(a > b for a, b in itertools.pairwise(lrs))
    assert learner.lr == pytest.approx(0.5e-2)  # half way: cos(pi/2)
    learner.set_progress(1.5)  # past the end: stays at 0, never negative
    assert learner.lr == pytest.approx(0.0)
    learner.set_progress(0.5)
    state = learner.state_dict()
    other = Learner(build_model(russian, TINY), cfg)
    other.model.load_state_dict(learner.model.state_dict())
    other.load_state_dict(state)
    other.set_progress(0.5)
    assert other.step_count == 4 and other.lr == pytest.approx(learner.lr)
    a, b = learner.step(batch), other.step(batch)
    assert a["loss/total"] == pytest.approx(b["loss/total"], rel=1e-5)


def test_constant_schedule_and_unknown_schedule(russian):
    learner = Learner(build_model(russian, TINY), TrainConfig(lr=3e-3, lr_schedule="constant"))
    learner.set_progress(0.9)
    assert learner.lr == pytest.approx(3e-3)
    bad = TrainConfig()
    bad.lr_schedule = "linear"  # bypassing validation: the learner still refuses it
    with pytest.raises(ValueError, match="unknown schedule 'linear'"):
        Learner(build_model(russian, TINY), bad)


def test_grad_clip(russian):
    model = build_model(russian, TINY)
    learner = Learner(model, TrainConfig(grad_clip=1e-3, lr=1e-3, batch_size=8))
    before = [p.detach().clone() for p in model.parameters()]
    learner.step(random_batch(8, model.n_actions))
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=False))


def test_train_from_source_averages(russian):
    from tammi_rl.train.replay import ReplayBuffer

    model = build_model(russian, TINY)
    buf = ReplayBuffer(100, (11, 8, 8), 32)
    buf.add(random_batch(40, model.n_actions))
    learner = Learner(model, TrainConfig(batch_size=8))
    metrics = learner.train(buf, 3, np.random.default_rng(0))
    assert learner.step_count == 3 and set(metrics) >= {"loss/policy", "loss/value", "value/accuracy"}
    weights = learner.weights()
    assert all(v.device.type == "cpu" for v in weights.values())


def test_precision_choice():
    from tammi_rl.train.learner import autocast_dtype

    cpu = torch.device("cpu")
    assert autocast_dtype("fp32", cpu) is None and autocast_dtype("bf16", cpu) is torch.bfloat16
    native = torch.ops.mkldnn._is_mkldnn_bf16_supported()
    assert autocast_dtype("auto", cpu) is (torch.bfloat16 if native else None)
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        autocast_dtype("fp8", cpu)


def test_bf16_step_is_close_to_fp32_and_weights_stay_fp32(russian):
    torch.manual_seed(0)
    base = build_model(russian, TINY)
    batch = random_batch(16, base.n_actions, seed=4)
    losses = {}
    for precision in ("fp32", "bf16"):
        model = build_model(russian, TINY)
        model.load_state_dict(base.state_dict())
        learner = Learner(model, TrainConfig(batch_size=16, precision=precision))
        losses[precision] = learner.step(batch)["loss/total"]
        assert all(p.dtype == torch.float32 for p in model.parameters())
    assert losses["bf16"] == pytest.approx(losses["fp32"], rel=0.02)


# --- the weight average ----------------------------------------------------------------------
def test_the_average_follows_the_trained_weights_on_its_time_constant(russian):
    model = build_model(russian, TINY)
    average = WeightAverage(model, samples=800, batch_size=8)
    assert average.decay == pytest.approx(math.exp(-0.01))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    for _ in range(300):
        average.update(model)
    # The first update's decay is 1/10, then (1+n)/(10+n) until it reaches exp(-0.01).
    decays = [min(math.exp(-0.01), (1 + n) / (10 + n)) for n in range(300)]
    expected_share_left = math.prod(decays)
    weight = "stem.0.weight"
    moved = average.model.state_dict()[weight] - start[weight]
    torch.testing.assert_close(moved, torch.full_like(moved, 1.0 - expected_share_left))
    assert not any(p.requires_grad for p in average.model.parameters())
    with pytest.raises(ValueError, match=r"train\.ema_samples"):
        WeightAverage(model, samples=0, batch_size=8)


def test_with_an_average_the_learner_plays_the_average_and_saves_both(russian):
    model = build_model(russian, TINY)
    cfg = TrainConfig(lr=1e-2, batch_size=8, ema_samples=400)
    learner = Learner(model, cfg)
    batch = random_batch(8, model.n_actions)
    for _ in range(5):
        learner.step(batch)
    assert learner.playing_model is not learner.model and learner.average is not None
    playing, trained = learner.weights(), learner.model.state_dict()
    assert not torch.equal(playing["stem.0.weight"], trained["stem.0.weight"])
    torch.testing.assert_close(playing["stem.0.weight"], learner.average.model.state_dict()["stem.0.weight"])
    state = copy.deepcopy(learner.state_dict())  # the optimizer's state holds live tensors
    assert state["average_updates"] == 5 and set(state["trained_weights"]) == set(trained)

    # A resume: the network first gets the checkpoint's model (the playing weights), then the state.
    other = Learner(build_model(russian, TINY), cfg)
    other.model.load_state_dict(playing)
    other.load_state_dict(state)
    for key, value in trained.items():
        torch.testing.assert_close(other.model.state_dict()[key], value, msg=key)
    for key, value in playing.items():
        torch.testing.assert_close(other.weights()[key], value, msg=key)
    a, b = learner.step(batch), other.step(batch)
    assert a["loss/total"] == pytest.approx(b["loss/total"], rel=1e-5)
    torch.testing.assert_close(learner.weights()["stem.0.weight"], other.weights()["stem.0.weight"])


def test_turning_the_average_off_at_a_resume_keeps_training_the_trained_weights(russian):
    with_average = Learner(build_model(russian, TINY), TrainConfig(batch_size=8, ema_samples=400))
    batch = random_batch(8, with_average.model.n_actions)
    for _ in range(3):
        with_average.step(batch)
    state, playing = with_average.state_dict(), with_average.weights()
    plain = Learner(build_model(russian, TINY), TrainConfig(batch_size=8))
    plain.model.load_state_dict(playing)
    plain.load_state_dict(state)
    assert plain.playing_model is plain.model
    torch.testing.assert_close(plain.weights()["stem.0.weight"], with_average.model.state_dict()["stem.0.weight"])
    # and on: the average starts from the playing weights
    fresh = Learner(build_model(russian, TINY), TrainConfig(batch_size=8, ema_samples=400))
    fresh.model.load_state_dict(plain.weights())
    fresh.load_state_dict(plain.state_dict())
    torch.testing.assert_close(fresh.weights()["stem.0.weight"], plain.weights()["stem.0.weight"])


# --- the auxiliary outputs ------------------------------------------------------------------------
AUX_SHAPES = {"soft_policy": (8, 896), "ownership": (8, 3, 32), "short_value": (8,), "opponent_policy": (8, 896)}
"""Each auxiliary output's shape for 8 Russian positions (A = 32 squares x 4 directions x 7
distances = 896 hop actions, S = 32 squares)."""


def aux_config(*outputs: str) -> NetworkConfig:
    return NetworkConfig(blocks=1, channels=16, value_hidden=16, **dict.fromkeys(outputs, True))


def test_soft_policy_target_is_the_policy_to_the_quarter_power_renormalised():
    legal = torch.tensor([[2, 0, 1, -1], [-1, -1, -1, -1]])
    policy = torch.tensor([[0.81, 0.19, 0.0, 0.0], [0, 0, 0, 0]])
    logits, soft_logits = torch.randn(2, 4), torch.randn(2, 4)
    batch = {"legal": legal, "policy": policy, "outcome": torch.tensor([0, 2])}
    soft = torch.tensor([0.81**0.25, 0.19**0.25])
    soft = soft / soft.sum()  # action 2 then action 0; action 1 was legal but never chosen: 0
    logp = torch.log_softmax(soft_logits[0, [2, 0, 1]], dim=0)
    expected = -(soft[0] * logp[0] + soft[1] * logp[1])
    wdl = torch.randn(2, 3)
    plain, plain_metrics = policy_value_loss(logits, wdl, batch, 1.0)
    total, metrics = policy_value_loss(logits, wdl, batch, 1.0, auxiliary={"soft_policy": (soft_logits, 8.0)})
    assert metrics["loss/soft_policy"] == pytest.approx(float(expected), rel=1e-5)
    assert float(total) == pytest.approx(float(plain) + 8.0 * float(expected), rel=1e-5)
    assert "loss/soft_policy" not in plain_metrics and metrics["loss/policy"] == plain_metrics["loss/policy"]
    assert float(soft[1]) > 0.19 * 1.5  # flatter than the policy itself


def test_ownership_loss_is_the_mean_cross_entropy_over_recorded_squares():
    logits = torch.randn(2, 3, 4)
    owners = torch.tensor([[0, 1, 2, -1], [-1, -1, -1, -1]], dtype=torch.int8)
    logp = torch.log_softmax(logits, dim=1)
    expected = -(logp[0, 0, 0] + logp[0, 1, 1] + logp[0, 2, 2]) / 3  # the second sample: nothing recorded
    assert float(ownership_loss(logits, owners, torch.ones(2))) == pytest.approx(float(expected), rel=1e-5)
    weighted = ownership_loss(logits, torch.tensor([[0, 0, 0, 0], [2, 2, 2, 2]]), torch.tensor([1.0, 3.0]))
    per_sample = [-logp[0, 0].mean(), -logp[1, 2].mean()]
    assert float(weighted) == pytest.approx(float((per_sample[0] + 3 * per_sample[1]) / 4), rel=1e-5)
    assert float(ownership_loss(logits, torch.full((2, 4), -1), torch.ones(2))) == 0.0


def test_short_value_loss_is_the_weighted_squared_error_over_recorded_targets():
    predicted = torch.tensor([0.5, -0.5, 0.0])
    target = torch.tensor([1.0, float("nan"), -0.5])
    assert float(short_value_loss(predicted, target, torch.ones(3))) == pytest.approx((0.25 + 0.25) / 2)
    assert float(short_value_loss(predicted, target, torch.tensor([3.0, 1.0, 1.0]))) == pytest.approx(
        (3 * 0.25 + 0.25) / 4
    )
    assert float(short_value_loss(predicted, torch.full((3,), float("nan")), torch.ones(3))) == 0.0


def test_opponent_reply_loss_is_a_policy_cross_entropy_over_samples_with_a_reply():
    batch = {
        "legal": torch.tensor([[0, 1], [1, 2]]),
        "policy": torch.tensor([[1.0, 0.0], [0.5, 0.5]]),
        "outcome": torch.tensor([0, 1]),
        "reply_legal": torch.tensor([[2, 3], [-1, -1]]),  # the second sample has no stored reply
        "reply_policy": torch.tensor([[0.25, 0.75], [0.0, 0.0]]),
    }
    logits, wdl, reply = torch.randn(2, 4), torch.randn(2, 3), torch.randn(2, 4)
    logp = torch.log_softmax(reply[0, [2, 3]], dim=0)
    expected = -(0.25 * logp[0] + 0.75 * logp[1])
    _, metrics = policy_value_loss(logits, wdl, batch, 1.0, auxiliary={"opponent_policy": (reply, 0.15)})
    assert metrics["loss/opponent_policy"] == pytest.approx(float(expected), rel=1e-5)
    with pytest.raises(ValueError, match="unknown auxiliary output 'bogus'"):
        policy_value_loss(logits, wdl, batch, 1.0, auxiliary={"bogus": (reply, 1.0)})


@pytest.mark.parametrize("output", sorted(AUX_SHAPES))
def test_an_auxiliary_output_changes_nothing_that_plays(russian, output):
    plain = build_model(russian, TINY).eval()
    extended = build_model(russian, aux_config(output)).eval()
    missing, unexpected = extended.load_state_dict(plain.state_dict(), strict=False)
    assert unexpected == [] and missing and all(key.startswith(f"{output}_out.") for key in missing)
    obs = torch.as_tensor(random_batch(8, plain.n_actions, seed=4).obs)
    with torch.no_grad():
        p, v = plain(obs)
        ep, ev = extended(obs)
        heads = extended.forward_heads(obs)._asdict()
        plain_heads = plain.forward_heads(obs)._asdict()
    assert torch.equal(p, ep) and torch.equal(v, ev)
    assert torch.allclose(heads["policy"], p, atol=1e-6) and torch.allclose(heads["wdl"], v, atol=1e-6)
    assert heads[output].shape == AUX_SHAPES[output]
    assert all(heads[other] is None for other in AUX_SHAPES if other != output)
    assert all(plain_heads[name] is None for name in AUX_SHAPES)
    if output in ("soft_policy", "opponent_policy"):
        assert not torch.allclose(heads[output], p)
    if output == "short_value":
        assert (heads[output].abs() <= 1).all()


def test_the_ownership_logits_of_a_square_are_read_at_its_cell(russian):
    model = build_model(russian, aux_config("ownership")).eval()
    obs = torch.as_tensor(random_batch(8, model.n_actions, seed=4).obs)
    with torch.no_grad():
        ownership = model.forward_heads(obs).ownership
        at_cell = model.ownership_out(model.tower(model.stem(obs))).flatten(2)[:, :, int(model.cells[0])]
    assert ownership is not None and torch.allclose(ownership[:, :, 0], at_cell)


def test_the_opponent_reply_logits_are_read_in_the_opponents_frame(russian):
    """The opponent's square s sits where the mover's square S - 1 - s does (the board turned)."""
    model = build_model(russian, aux_config("opponent_policy")).eval()
    obs = torch.as_tensor(random_batch(8, model.n_actions, seed=4).obs)
    with torch.no_grad():
        reply = model.forward_heads(obs).opponent_policy
        hidden = model.policy_conv[:-1](model.tower(model.stem(obs)))
        planes = model.opponent_policy_out(hidden).flatten(2)  # [B, 4 * D, H * W] in the mover's frame
    assert reply is not None
    d = model.max_distance
    last = int(model.cells[-1])  # the mover's last square is the opponent's first
    np.testing.assert_allclose(reply.view(8, 32, 4, d)[:, 0].reshape(8, -1), planes[:, :, last], atol=1e-6)


@pytest.mark.parametrize(("output", "weight"), [(name, w) for name in sorted(AUX_SHAPES) for w in (1.0, 0.0)])
def test_the_learner_trains_an_auxiliary_output_with_its_weight(russian, output, weight):
    model = build_model(russian, aux_config(output))
    module = getattr(model, f"{output}_out")
    before = copy.deepcopy(module.state_dict())
    cfg = TrainConfig(batch_size=16, lr=1e-2, **{AUXILIARY_OUTPUTS[output]: weight})
    learner = Learner(model, cfg)
    batch = random_batch(16, model.n_actions, seed=5)
    first = learner.step(batch)
    for _ in range(30):
        last = learner.step(batch)
    moved = any(not torch.equal(a, b) for a, b in zip(before.values(), module.state_dict().values(), strict=True))
    key = f"loss/{output}"
    if weight > 0:
        assert learner.trains(output) and moved
        assert last[key] < first[key]
        assert last["loss/total"] == pytest.approx(
            last["loss/policy"] + cfg.value_loss_weight * last["loss/value"] + weight * last[key], rel=1e-4
        )
    else:
        assert not learner.trains(output) and not moved and key not in last
