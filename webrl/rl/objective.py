"""The WebRL losses and advantages in three forms: the official code's, the paper's, and AWR,
the Advantage-Weighted Regression baseline the paper compares against (Peng et al. 2019).

Tensors are per sample ([B]) unless stated. Critic logits are [B, 2 heads, 2 classes]; class 1 is "success".
Sequence log-probs `logp` are sums over the action tokens (data.action_logprobs), `n_tokens` their counts.
The official form is the default: it produced the published numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

STEP_MARGIN = 0.05  # official advantage's per-step margin
NEGATIVE_ADVANTAGE = -0.6  # official binarised advantage of a non-positive step
AWR_MAX_WEIGHT = 20.0  # AWR's clip on exp(A / τ) (Peng et al. 2019)


def value_from_logits(logits: Tensor) -> Tensor:
    """V(s) = min_h softmax(logits_h(s))[1]  (official code, "double critic"). logits [B,2,2] -> [B]."""
    return logits.softmax(dim=-1)[..., 1].min(dim=1).values


def critic_loss_official(logits_s: Tensor, logits_next: Tensor, label: Tensor) -> Tensor:
    """L = CE(h1(s),y) + CE(h2(s),y) + CE(h1(s'),y) + CE(h2(s'),y), y = 1[mc_return > 0]  (official code).

    Cross-entropy on the raw logits (no softmax first, unlike the double softmax of some official commits); each
    term is a batch mean.
    """
    y = label.long()
    return sum(F.cross_entropy(logits[:, head], y) for logits in (logits_s, logits_next) for head in range(2))


def critic_loss_paper(logits_s: Tensor, reward: Tensor) -> Tensor:
    """L(V) = −E[ r_T·log V(s) + (1 − r_T)·log(1 − V(s)) ], V = min over heads  (paper Eq. 8).

    log V = min_h logsigmoid(l1 − l0) and log(1 − V) = max_h logsigmoid(l0 − l1): the same value without
    taking the log of a probability that rounds to 0 or 1.
    """
    margin = logits_s[..., 1] - logits_s[..., 0]  # [B, 2 heads]
    log_v = F.logsigmoid(margin).min(dim=1).values
    log_not_v = F.logsigmoid(-margin).max(dim=1).values
    r = reward.to(log_v.dtype)
    return -(r * log_v + (1 - r) * log_not_v).mean()


def advantage_official(v: Tensor, v_next: Tensor, reward: Tensor, mc_return: Tensor) -> Tensor:
    """Â = clamp(V(s') − V(s) − 0.05 + r + mc_return, −1, 1);  A = +1 if Â ≥ 0 else −0.6  (official code).

    r is the trajectory outcome on every step and s' = s at the terminal step (TrainingStep.next_observation).
    """
    a_hat = (v_next - v - STEP_MARGIN + reward + mc_return).clamp(-1.0, 1.0)
    return torch.where(a_hat >= 0, 1.0, NEGATIVE_ADVANTAGE).to(v.dtype).detach()


def advantage_paper(v: Tensor, v_next: Tensor, reward_T: Tensor, terminal: Tensor, lam: float = 0.5) -> Tensor:
    """A = λ·(r_t + V(s_{t+1}) − V(s_t)) + (1 − λ)·(r_T − V(s_t)), λ = 0.5  (paper Eq. 9).

    The reward is terminal-only: r_t = r_T at the last step and 0 before it; V(s_{T+1}) = 0 at the last step.
    """
    terminal = terminal.bool()
    r_t = torch.where(terminal, reward_T, 0.0)
    next_value = torch.where(terminal, 0.0, v_next)
    return (lam * (r_t + next_value - v) + (1 - lam) * (reward_T - v)).detach()


def advantage_awr(v: Tensor, reward_T: Tensor) -> Tensor:
    """A = r_T − V(s): the episode's outcome minus the value, both in [0, 1]  (AWR with the critic's own target;
    the official mc_return, the outcome summed over the remaining steps, reaches 10 and would clip most weights)."""
    return (reward_T - v).detach()


def actor_loss_official(
    logp: Tensor, logp_ref: Tensor, n_tokens: Tensor, advantage: Tensor
) -> tuple[Tensor, dict[str, float]]:
    """The official actor loss (official code, trainer.actor_loss), sample by sample:

        p_ref = exp(ℓ_ref / n);  β0 = 5 if (A ≥ 0 and p_ref ≥ 0.8) or (A < 0 and p_ref < 0.9) else 1
        m = 1[A > 0];  Δ = (ℓ − ℓ_ref) / n;  β = min(β0, |A / Δ|), detached
        L = mean_batch[ m · (1/β) · SmoothL1_{δ=1}(β·Δ, A) ]

    The official code divides by N = Σ_batch m·n, with micro-batches of 1: N is the sample's own n. Pooled over
    a micro-batch of B, N would shrink each Δ up to B-fold and loosen the stop as much; per sample, a micro-batch's
    loss is the mean of its samples' losses at micro-batch 1, whatever its size.
    dL/dΔ per positive sample is −1 for Δ ≤ 0, β0·Δ − 1 for 0 < Δ < 1/β0 and 0 beyond: token-mean likelihood
    ascent that stops at a per-token log-ratio of 1/β0. Negative samples get no loss at all.
    Stats: mean per-token log-ratio Δ of the positive samples, fraction positive, mean β over positives.
    """
    a = advantage.to(logp.dtype)
    p_ref = torch.exp(logp_ref.detach() / n_tokens)
    beta0 = torch.where(((a >= 0) & (p_ref >= 0.8)) | ((a < 0) & (p_ref < 0.9)), 5.0, 1.0).to(logp.dtype)
    positive = a > 0
    delta = (logp - logp_ref.detach()) / n_tokens
    ratio = torch.where(delta != 0, (a / delta.detach()).abs(), torch.inf)
    beta = torch.where(positive, torch.minimum(beta0, ratio), 1.0)  # masked rows: any finite β, never used
    per_sample = F.smooth_l1_loss(beta * delta, a, reduction="none", beta=1.0) / beta
    # Capped with Δ on A's side, β·Δ = A in exact arithmetic (loss 0, gradient 0); rounding would leave 1 ulp.
    settled = positive & (beta < beta0) & (delta > 0)
    loss = torch.where(positive & ~settled, per_sample, 0.0).mean()
    any_positive = bool(positive.any())
    stats = {
        "log_ratio": float(delta.detach()[positive].mean()) if any_positive else 0.0,
        "positive_fraction": float(positive.float().mean()),
        "beta": float(beta[positive].mean()) if any_positive else 0.0,
    }
    return loss, stats


def actor_loss_paper(logp: Tensor, logp_ref: Tensor, advantage: Tensor, beta: float) -> Tensor:
    """L = mean_batch[ (β·(log π_θ(a|s) − log π_ref(a|s)) − A)² ] on sequence log-probs  (the paper's loss).

    π_ref is the actor at the start of the phase; A comes from Eq. 9 (advantage_paper).
    """
    return ((beta * (logp - logp_ref.detach()) - advantage) ** 2).mean()


def awr_weights(advantage: Tensor, temperature: float) -> Tensor:
    """w = min(exp(A / τ), 20), detached  (AWR)."""
    return torch.exp(advantage.detach() / temperature).clamp(max=AWR_MAX_WEIGHT)


def actor_loss_awr(logp: Tensor, n_tokens: Tensor, advantage: Tensor, temperature: float) -> Tensor:
    """L = −mean_batch[ w · ℓ / n ], w = awr_weights(A, τ): weighted token-mean log-likelihood  (AWR).

    No reference term: AWR's only tie to the data's policy is that it regresses onto the data's actions.
    """
    w = awr_weights(advantage.to(logp.dtype), temperature)
    return -(w * logp / n_tokens.clamp(min=1)).mean()


def sft_loss(logp: Tensor, n_tokens: Tensor) -> Tensor:
    """L = −Σ_batch ℓ / Σ_batch n: token-mean NLL of the actions (official code's unused actor_loss_sft)."""
    return -logp.sum() / n_tokens.sum().clamp(min=1)


@dataclass(frozen=True)
class Objective:
    """Which WebRL objective to train: "official" (released code; default), "paper" (Eq. 8, Eq. 9, squared
    loss) or "awr" (the AWR baseline: the paper's critic, A = r_T − V(s), advantage-weighted likelihood).

    One call signature per role for all forms, so the trainer does not branch. `beta` is the paper
    form's KL weight (the paper does not state its final value; Fig. 7 ablates it); `lam` is Eq. 9's λ;
    `awr_temperature` is AWR's τ in exp(A / τ) (the paper does not state it).
    """

    form: Literal["official", "paper", "awr"] = "official"
    beta: float = 1.0
    lam: float = 0.5
    awr_temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.form not in ("official", "paper", "awr"):
            raise ValueError(f"objective form must be 'official', 'paper' or 'awr', got {self.form!r}")
        if not self.awr_temperature > 0:
            raise ValueError(f"awr_temperature must be positive, got {self.awr_temperature}")

    def critic_loss(self, logits_s: Tensor, logits_next: Tensor, reward: Tensor, mc_return: Tensor) -> Tensor:
        """Official: 4-term CE with labels 1[mc_return > 0] on s and s'; paper and awr: BCE of V(s) toward r_T."""
        if self.form == "official":
            return critic_loss_official(logits_s, logits_next, mc_return > 0)
        return critic_loss_paper(logits_s, reward)

    def advantage(self, v: Tensor, v_next: Tensor, reward: Tensor, mc_return: Tensor, terminal: Tensor) -> Tensor:
        """A per sample; v_next is V(TrainingStep.next_observation) (the paper form ignores it at terminal steps, awr
        everywhere)."""
        if self.form == "official":
            return advantage_official(v, v_next, reward, mc_return)
        if self.form == "awr":
            return advantage_awr(v, reward)
        return advantage_paper(v, v_next, reward, terminal, self.lam)

    def actor_loss(
        self, logp: Tensor, logp_ref: Tensor, n_tokens: Tensor, advantage: Tensor
    ) -> tuple[Tensor, dict[str, float]]:
        """(loss, stats) of the chosen form; the paper and awr forms' stats mirror the official ones ("beta" is
        the paper's β, and awr's mean weight)."""
        if self.form == "official":
            return actor_loss_official(logp, logp_ref, n_tokens, advantage)
        stats = {
            "log_ratio": float((logp - logp_ref).detach().sum() / n_tokens.sum().clamp(min=1)),
            "positive_fraction": float((advantage > 0).float().mean()),
        }
        if self.form == "awr":
            weights = awr_weights(advantage, self.awr_temperature)
            return (
                actor_loss_awr(logp, n_tokens, advantage, self.awr_temperature),
                {**stats, "beta": float(weights.mean())},
            )
        return actor_loss_paper(logp, logp_ref, advantage, self.beta), {**stats, "beta": self.beta}
