"""The GRPO family: advantages relative to a group of rollouts of the same task from the same start, and the
clipped surrogate loss they train.

- GRPO (DeepSeekMath, arXiv 2402.03300), at the trajectory level for multi-turn agents (WebAgent-R1,
  arXiv 2505.16421): every step of trajectory i carries A_i = (R_i − mean_g R) / (std_g R + ε) over the
  trajectories of its group g (the population std: a group of one has A = 0).
- GiGPO (arXiv 2505.10978): A = A^E + ω·A^S. A^E is GRPO's episode advantage; A^S is a step advantage over *anchor
  states*, the steps of one group whose observations are identical: within each anchor, the discounted return
  from the step, γ^(k_i − 1 − t)·R_i for step t of a k_i-step trajectory (the reward comes at the end), is
  normalised as R is for A^E. A step whose observation no other step of its group shares has A^S = 0.
- DAPO's dynamic sampling (arXiv 2503.14476): a group whose rewards are all equal has A = 0 everywhere and only
  dilutes the batch; it is dropped (counted).
- The 1/k normaliser (multi-step GRPO as in AsyncWebRL/WebGym): each step's loss is weighted by k̄ / k_i, so every
  trajectory counts once whatever its length k_i (k̄, the mean length, keeps the average weight at 1).

The loss, per action token of a step s (DeepSeekMath Eq. 3, its KL by the k3 estimator, Schulman 2020):

    ρ = exp(ℓ − ℓ_old);  L_tok = −min(ρ·A_s, clip(ρ, 1 − ε, 1 + ε)·A_s) + β·(exp(ℓ_ref − ℓ) − (ℓ_ref − ℓ) − 1)
    L_s = mean of L_tok over s's action tokens;  L = mean_batch[ w_s · L_s ]

ℓ are per-token log-probs under the trained actor, ℓ_old under the policy that sampled the rollouts, ℓ_ref under
the reference.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev

import torch
from torch import Tensor

GROUP_EPS = 1e-6  # ε of the group normalisation


@dataclass(frozen=True)
class GroupStep:
    """One step as the group advantages see it: its group (the task), trajectory, position, the trajectory's
    length and reward, and its anchor (the observation it answered)."""

    group: Hashable
    episode: str
    step: int
    steps: int  # k_i, the trajectory's length
    reward: float
    anchor: str


def normalised(values: Sequence[float]) -> list[float]:
    """(x − mean) / (std + ε) over `values` (population std)."""
    mean, std = fmean(values), pstdev(values)
    return [(x - mean) / (std + GROUP_EPS) for x in values]


def episode_rewards(steps: Sequence[GroupStep]) -> dict[Hashable, dict[str, float]]:
    """group -> episode -> R."""
    groups: dict[Hashable, dict[str, float]] = defaultdict(dict)
    for s in steps:
        groups[s.group][s.episode] = s.reward
    return groups


def grpo_advantages(steps: Sequence[GroupStep]) -> list[float]:
    """A_i = (R_i − mean_g R) / (std_g R + ε) on every step of trajectory i (module docstring)."""
    advantage: dict[tuple[Hashable, str], float] = {}
    for group, rewards in episode_rewards(steps).items():
        for episode, a in zip(rewards, normalised(list(rewards.values())), strict=True):
            advantage[group, episode] = a
    return [advantage[s.group, s.episode] for s in steps]


def gigpo_advantages(steps: Sequence[GroupStep], omega: float, gamma: float) -> list[float]:
    """A = A^E + ω·A^S: GRPO's episode advantage plus the step advantage over anchor states (module docstring)."""
    anchors: dict[tuple[Hashable, str], list[int]] = defaultdict(list)
    for index, s in enumerate(steps):
        anchors[s.group, s.anchor].append(index)
    step_advantage = [0.0] * len(steps)
    for members in anchors.values():
        returns = [gamma ** (steps[i].steps - 1 - steps[i].step) * steps[i].reward for i in members]
        for i, a in zip(members, normalised(returns), strict=True):
            step_advantage[i] = a
    return [a + omega * b for a, b in zip(grpo_advantages(steps), step_advantage, strict=True)]


def uniform_groups(steps: Sequence[GroupStep]) -> set[Hashable]:
    """The groups whose trajectories all have the same reward: no signal (DAPO's dynamic sampling drops them)."""
    return {group for group, rewards in episode_rewards(steps).items() if len(set(rewards.values())) == 1}


def trajectory_weights(steps: Sequence[GroupStep]) -> list[float]:
    """w_s = k̄ / k_i, k_i the steps of s's trajectory among `steps`, k̄ their mean over trajectories: the batch mean
    of w·L is the mean over trajectories of each one's step mean."""
    counts: dict[tuple[Hashable, str], int] = defaultdict(int)
    for s in steps:
        counts[s.group, s.episode] += 1
    mean_length = len(steps) / len(counts)
    return [mean_length / counts[s.group, s.episode] for s in steps]


def clipped_loss(
    logp: Tensor,
    logp_old: Tensor,
    logp_ref: Tensor,
    mask: Tensor,
    advantage: Tensor,
    weight: Tensor,
    clip: float,
    kl_coef: float,
) -> tuple[Tensor, dict[str, float]]:
    """The clipped surrogate with the k3 KL (module docstring). Token tensors are [B, T] with `mask` True at the
    action tokens; `advantage` and `weight` are [B]. Stats: the mean ratio, the fraction of tokens clipped and the
    mean k3 KL to the reference, over action tokens."""
    a = advantage.to(logp.dtype).unsqueeze(1)
    ratio = torch.exp(logp - logp_old.detach())
    clipped = ratio.clamp(1 - clip, 1 + clip)
    surrogate = torch.minimum(ratio * a, clipped * a)
    log_ref_ratio = logp_ref.detach() - logp
    k3 = torch.exp(log_ref_ratio) - log_ref_ratio - 1
    per_token = -surrogate + kl_coef * k3
    n = mask.sum(-1).clamp(min=1)
    per_step = torch.where(mask, per_token, 0.0).sum(-1) / n
    loss = (weight.to(logp.dtype) * per_step).mean()
    tokens = mask.sum().clamp(min=1)
    stats = {
        "ratio": float(torch.where(mask, ratio.detach(), 0.0).sum() / tokens),
        "clip_fraction": float(((ratio.detach() - clipped.detach()).abs() > 0)[mask].float().sum() / tokens),
        "kl_ref": float(torch.where(mask, k3.detach(), 0.0).sum() / tokens),
    }
    return loss, stats


@dataclass(frozen=True)
class GroupObjective:
    """GRPO or GiGPO with its settings: ε of the clip, β of the k3 KL, the 1/k normaliser, GiGPO's ω and γ, and
    whether groups without signal are dropped (DAPO)."""

    form: str = "grpo"
    clip: float = 0.2
    kl_coef: float = 0.0
    trajectory_normaliser: bool = True
    omega: float = 1.0
    gamma: float = 0.95
    dynamic_sampling: bool = False

    def advantages(self, steps: Sequence[GroupStep]) -> list[float]:
        if self.form == "gigpo":
            return gigpo_advantages(steps, self.omega, self.gamma)
        return grpo_advantages(steps)

    def weights(self, steps: Sequence[GroupStep]) -> list[float]:
        return trajectory_weights(steps) if self.trajectory_normaliser else [1.0] * len(steps)
