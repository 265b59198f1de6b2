"""The GRPO family's advantages, weights and loss against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest
import torch

from webrl.rl.grpo import (
    GroupObjective,
    GroupStep,
    clipped_loss,
    gigpo_advantages,
    grpo_advantages,
    trajectory_weights,
    uniform_groups,
)


def trajectory(group, episode, reward, pages):
    return [GroupStep(group, episode, t, len(pages), reward, page) for t, page in enumerate(pages)]


# task 1: three members (rewards 1, 0, 0; lengths 2, 1, 3); task 2: two members, both failed (no signal)
STEPS = [
    *trajectory(1, "1-0", 1.0, ["start", "form"]),
    *trajectory(1, "1-1", 0.0, ["start"]),
    *trajectory(1, "1-2", 0.0, ["start", "form", "other"]),
    *trajectory(2, "2-0", 0.0, ["a"]),
    *trajectory(2, "2-1", 0.0, ["a", "b"]),
]


def test_grpo_advantage_is_the_reward_normalised_within_its_group_on_every_step():
    # task 1: mean 1/3, population std √2/3: the success (1 − 1/3)/(√2/3) = √2, each failure −1/√2; task 2: 0
    s, f = math.sqrt(2), -1 / math.sqrt(2)
    assert grpo_advantages(STEPS) == pytest.approx([s, s, f, f, f, f, 0, 0, 0], rel=1e-4, abs=1e-5)


def test_a_group_of_one_has_no_advantage():
    assert grpo_advantages(trajectory(1, "1-0", 1.0, ["x", "y"])) == [0.0, 0.0]


def test_gigpo_adds_the_step_advantage_over_identical_observations():
    gamma, omega = 0.5, 2.0
    # anchor "start" of task 1: returns γ^1·1 = 0.5, γ^0·0 = 0, γ^2·0 = 0: mean 1/6, std √2/6:
    #   (0.5 − 1/6)/(√2/6) = √2, (0 − 1/6)/(√2/6) = −1/√2 twice
    # anchor "form" of task 1: returns γ^0·1 = 1 and γ^1·0 = 0: ±1;  "other", "a", "b": alone, 0
    s, f = math.sqrt(2), -1 / math.sqrt(2)
    expected = [s + omega * s, s + omega * 1, f + omega * f, f + omega * f, f - omega * 1, f, 0, 0, 0]
    assert gigpo_advantages(STEPS, omega, gamma) == pytest.approx(expected, rel=1e-4, abs=1e-5)


def test_gigpo_without_step_weight_is_grpo():
    assert gigpo_advantages(STEPS, 0.0, 0.95) == grpo_advantages(STEPS)


def test_groups_whose_rewards_are_all_equal_carry_no_signal():
    assert uniform_groups(STEPS) == {2}


def test_the_trajectory_normaliser_makes_every_trajectory_count_once():
    # 9 steps over 5 trajectories: k̄ = 1.8; weights k̄/k_i
    w = trajectory_weights(STEPS)
    assert w == pytest.approx([0.9, 0.9, 1.8, 0.6, 0.6, 0.6, 1.8, 0.9, 0.9])
    assert sum(w) / len(w) == pytest.approx(1.0)


def test_the_objective_chooses_its_advantage_and_weights():
    assert GroupObjective("gigpo", omega=0.0).advantages(STEPS) == grpo_advantages(STEPS)
    assert GroupObjective("grpo", trajectory_normaliser=False).weights(STEPS) == [1.0] * len(STEPS)


def tokens(*rows):
    """[B, 2] tensors from per-row token lists; a row of one token is padded (masked)."""
    values = [list(r) + [0.0] * (2 - len(r)) for r in rows]
    mask = torch.tensor([[True] * len(r) + [False] * (2 - len(r)) for r in rows])
    return torch.tensor(values, dtype=torch.float32), mask


def test_clipped_loss_by_hand():
    # row 0, A = 1: token ratios e^0.1 ≈ 1.105 (inside 1 ± 0.2: −1.105) and e^0.5 ≈ 1.649 (clipped to 1.2: −1.2)
    # row 1, A = −1, one token: ratio e^−0.5 ≈ 0.607: min(−0.607, −0.8) = −0.8, so L_tok = 0.8
    old, mask = tokens([-1.0, -1.0], [-1.0])
    logp = old + torch.tensor([[0.1, 0.5], [-0.5, 0.0]])
    weight = torch.tensor([1.0, 2.0])
    loss, stats = clipped_loss(logp, old, old, mask, torch.tensor([1.0, -1.0]), weight, clip=0.2, kl_coef=0.0)
    row0 = -(math.exp(0.1) + 1.2) / 2
    assert loss.item() == pytest.approx((row0 + 2 * 0.8) / 2, rel=1e-5)
    assert stats["clip_fraction"] == pytest.approx(2 / 3)  # e^0.5 and e^−0.5 lie outside [0.8, 1.2]
    assert stats["ratio"] == pytest.approx((math.exp(0.1) + math.exp(0.5) + math.exp(-0.5)) / 3, rel=1e-5)


def test_k3_kl_to_the_reference_by_hand():
    # A = 0: only the KL. log(π_ref/π) = −0.5 and 0.3: k3 = e^−0.5 + 0.5 − 1 and e^0.3 − 0.3 − 1
    logp, mask = tokens([-1.0, -2.0])
    ref = logp + torch.tensor([[-0.5, 0.3]])
    loss, stats = clipped_loss(logp, logp, ref, mask, torch.tensor([0.0]), torch.tensor([1.0]), 0.2, kl_coef=0.5)
    k3 = [math.exp(-0.5) + 0.5 - 1, math.exp(0.3) - 0.3 - 1]
    assert stats["kl_ref"] == pytest.approx(sum(k3) / 2, rel=1e-5)
    assert loss.item() == pytest.approx(0.5 * sum(k3) / 2, rel=1e-5)


def test_the_gradient_stops_where_the_ratio_is_clipped_in_the_advantages_direction():
    old, mask = tokens([-1.0, -1.0])
    logp = (old + torch.tensor([[0.0, 0.5]])).requires_grad_()
    loss, _ = clipped_loss(logp, old, old, mask, torch.tensor([1.0]), torch.tensor([1.0]), 0.2, 0.0)
    loss.backward()
    # token 0 at ratio 1: d(−ρ/2)/dℓ = −1/2; token 1 clipped at 1.2 with A > 0: no gradient
    assert logp.grad[0].tolist() == pytest.approx([-0.5, 0.0])
