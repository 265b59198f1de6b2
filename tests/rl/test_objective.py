"""Losses and advantages against numbers worked out by hand from the paper and the official code, and the
official actor loss driving real AdamW steps on the tiny model."""

from __future__ import annotations

import math

import pytest
import torch

from webrl.rl.data import action_logprobs, collate, encode, pad_token_id
from webrl.rl.objective import (
    AWR_MAX_WEIGHT,
    Objective,
    actor_loss_awr,
    actor_loss_official,
    actor_loss_paper,
    advantage_awr,
    advantage_official,
    advantage_paper,
    awr_weights,
    critic_loss_official,
    critic_loss_paper,
    sft_loss,
    value_from_logits,
)

LN3 = math.log(3)
# row 0: head 1 gives p(success) = 0.75, head 2 gives 0.5; row 1: 0.25 and 0.75
LOGITS = torch.tensor([[[0.0, LN3], [0.0, 0.0]], [[LN3, 0.0], [0.0, LN3]]])


def t(*values):
    return torch.tensor(values, dtype=torch.float32)


def test_value_is_the_min_over_heads_of_the_success_probability():
    assert value_from_logits(LOGITS).tolist() == pytest.approx([0.5, 0.25])


def test_official_critic_loss_is_four_cross_entropies_on_raw_logits():
    logits_next = torch.zeros(2, 2, 2)  # every CE on s' is ln 2
    # row 0, y = 1: −ln .75 − ln .5 (s) + 2 ln 2 (s');  row 1, y = 0: −ln .75 − ln .25 (s) + 2 ln 2 (s')
    row0 = -math.log(0.75) - math.log(0.5) + 2 * math.log(2)
    row1 = -math.log(0.75) - math.log(0.25) + 2 * math.log(2)
    loss = critic_loss_official(LOGITS, logits_next, torch.tensor([1, 0]))
    assert loss.item() == pytest.approx((row0 + row1) / 2)


def test_paper_critic_loss_is_bce_of_the_value_toward_the_outcome():
    # V = 0.5 with r = 1 → −ln .5;  V = 0.25 with r = 0 → −ln .75
    loss = critic_loss_paper(LOGITS, t(1, 0))
    assert loss.item() == pytest.approx((math.log(2) - math.log(0.75)) / 2)


def test_official_advantage_is_binarised_with_the_margin():
    v, v_next = t(0.25, 0.25, 1.0, 0.5), t(0.375, 0.25, 0.0, 0.5)
    reward, mc_return = t(0, 0, 1, 0), t(0, 0, 1.9, 0)
    # 0.125 − 0.05 ≥ 0 → 1;  0 − 0.05 < 0 → −0.6;  −1 − 0.05 + 1 + 1.9 > 0 → 1;  terminal failure s' = s → −0.6
    assert advantage_official(v, v_next, reward, mc_return).tolist() == pytest.approx([1, -0.6, 1, -0.6])


def test_paper_advantage_mixes_one_step_and_final_estimates():
    v, v_next = t(0.25, 0.25, 0.5), t(0.5, 0.9, 0.75)
    reward_T, terminal = t(1, 1, 0), torch.tensor([False, True, False])
    # 0.5·(0 + 0.5 − 0.25) + 0.5·(1 − 0.25) = 0.5;  terminal: 0.5·(1 + 0 − 0.25) + 0.5·0.75 = 0.75 (v_next unused);
    # failure: 0.5·(0 + 0.75 − 0.5) + 0.5·(0 − 0.5) = −0.125
    assert advantage_paper(v, v_next, reward_T, terminal).tolist() == pytest.approx([0.5, 0.75, -0.125])


@pytest.mark.parametrize(
    "p_ref, delta, loss, grad",
    [
        # β0 = 5 (p_ref ≥ 0.8): dL/dΔ = −1 for Δ ≤ 0, 5Δ − 1 below 1/5, 0 beyond
        (0.9, -0.5, 1.5 / 2, -1.0),  # β = min(5, 1/0.5) = 2, β·Δ = −1, SmoothL1 = 1.5, L = 1.5/β
        (0.9, 0.1, 0.125 / 5, -0.5),  # β = 5, β·Δ = 0.5, SmoothL1 = 0.125
        (0.9, 0.3, 0.0, 0.0),  # capped: β·Δ = 1 = A
        # β0 = 1 (p_ref < 0.8): −1, Δ − 1 below 1, 0 beyond
        (0.5, -3.0, 1.5 * 3, -1.0),
        (0.5, 0.5, 0.125, -0.5),
        (0.5, 2.0, 0.0, 0.0),
    ],
)
def test_official_actor_loss_and_gradient_by_hand(p_ref, delta, loss, grad):
    n = 4  # tokens; p_ref is the geometric-mean token probability, so ℓ_ref = n·ln p_ref
    logp_ref = t(n * math.log(p_ref))
    logp = (logp_ref + n * delta).requires_grad_()  # Δ = (ℓ − ℓ_ref)/n
    value, _ = actor_loss_official(logp, logp_ref, t(n), t(1.0))
    value.backward()
    assert value.item() == pytest.approx(loss, abs=1e-6)
    assert logp.grad.item() == pytest.approx(grad / n, abs=1e-6)  # dL/dℓ = dL/dΔ / n


def test_official_actor_loss_divides_each_sample_by_its_own_tokens_and_masks_negatives():
    # β0 = 1 throughout (p_ref = 0.5 < 0.8); n = 2, 4 and 5 tokens, the last sample negative
    n_tokens = t(2, 4, 5)
    logp_ref = n_tokens * math.log(0.5)
    logp = (logp_ref + t(1.0, -4.0, 2.0)).requires_grad_()
    loss, stats = actor_loss_official(logp, logp_ref, n_tokens, t(1.0, 1.0, -0.6))
    loss.backward()
    # Δ = 1/2 and −4/4 (pooling the positives' 6 tokens would give 1/6 and −4/6); β = min(1, |A/Δ|) = 1 for both:
    # SmoothL1(0.5, 1) = 0.125 and SmoothL1(−1, 1) = 2 − 0.5 = 1.5; the negative sample adds 0; mean over B = 3
    assert loss.item() == pytest.approx((0.125 + 1.5) / 3)
    # dL/dℓ = dL/dΔ / (n·B): (0.5 − 1)/(2·3) and −1/(4·3); nothing on the negative sample
    assert logp.grad.tolist() == pytest.approx([-0.5 / 6, -1 / 12, 0.0])
    assert stats == pytest.approx({"log_ratio": (0.5 - 1) / 2, "positive_fraction": 2 / 3, "beta": 1.0})


def test_official_actor_loss_per_sample_is_the_same_at_micro_batch_1_and_4():
    # unequal token counts; β0 = 5 below its stop, β0 = 1 below zero, β0 = 5 beyond its stop, a negative sample
    n_tokens = t(3, 7, 2, 5)
    logp_ref = n_tokens * torch.log(t(0.9, 0.5, 0.95, 0.3))
    shift, advantage = t(0.3, -2.0, 1.0, 0.5), t(1.0, 1.0, 1.0, -0.6)
    logp = (logp_ref + shift).requires_grad_()
    together, _ = actor_loss_official(logp, logp_ref, n_tokens, advantage)
    together.backward()
    alone, grads = [], []
    for i in range(4):
        one = (logp_ref[i : i + 1] + shift[i : i + 1]).requires_grad_()
        value, _ = actor_loss_official(one, logp_ref[i : i + 1], n_tokens[i : i + 1], advantage[i : i + 1])
        value.backward()
        alone.append(value.item())
        grads.append(one.grad.item())
    # Δ = 0.1: SmoothL1(0.5, 1)/5, dL/dΔ = 5·0.1 − 1;  Δ = −2/7: SmoothL1(−2/7, 1) = 9/7 − 0.5, dL/dΔ = −1;
    # Δ = 0.5 ≥ 1/5: settled;  negative: nothing
    assert alone == pytest.approx([0.125 / 5, 9 / 7 - 0.5, 0.0, 0.0])
    assert grads == pytest.approx([-0.5 / 3, -1 / 7, 0.0, 0.0])
    # the engine divides by the micro-batches it accumulates: 4 of 1 give the mean, as one of 4 does
    assert together.item() == pytest.approx(sum(alone) / 4)
    assert logp.grad.tolist() == pytest.approx([g / 4 for g in grads])


def test_paper_actor_loss_and_sft_loss_by_hand():
    # β = 0.5: (0.5·2 − 1)² = 0 and (0 + 0.6)² = 0.36
    assert actor_loss_paper(t(-1, -2), t(-3, -2), t(1, -0.6), beta=0.5).item() == pytest.approx(0.18)
    assert sft_loss(t(-3, -5), t(2, 3)).item() == pytest.approx(8 / 5)


def test_awr_advantage_is_the_outcome_minus_the_value():
    v = t(0.25, 0.5, 0.75).requires_grad_()
    advantage = advantage_awr(v, t(1.0, 1.0, 0.0))
    assert advantage.tolist() == pytest.approx([0.75, 0.5, -0.75])
    assert not advantage.requires_grad  # a target, not a path for the critic's gradient


def test_awr_weights_are_exp_of_a_over_tau_clipped_at_20():
    assert AWR_MAX_WEIGHT == 20
    # τ = 1: e^0 = 1, e^−1, e^2.5 ≈ 12.18 (under the clip), e^3.5 ≈ 33.1 → 20, e^1000 = inf → 20
    weights = awr_weights(t(0.0, -1.0, 2.5, 3.5, 1000.0), 1.0)
    assert weights.tolist() == pytest.approx([1.0, math.exp(-1), math.exp(2.5), 20.0, 20.0])
    # τ = 2 halves the exponent: A = 5 → e^2.5, under the clip again
    assert awr_weights(t(5.0), 2.0).item() == pytest.approx(math.exp(2.5))


def test_awr_actor_loss_by_hand_and_larger_advantage_larger_gradient():
    logp = t(-3.0, -4.0).requires_grad_()
    n_tokens, advantage = t(3, 2), t(math.log(2), math.log(4))  # w = 2 and 4
    loss = actor_loss_awr(logp, n_tokens, advantage, 1.0)
    # −(2·(−3)/3 + 4·(−4)/2) / 2 = −(−2 − 8) / 2 = 5
    assert loss.item() == pytest.approx(5.0)
    loss.backward()
    # dL/dℓ_i = −w_i / (n_i · B): −2/6 and −4/4; the weights carry no gradient of their own
    assert logp.grad.tolist() == pytest.approx([-1 / 3, -1.0])
    # the same token counts: the larger advantage gets the larger push up
    logp = t(-3.0, -3.0).requires_grad_()
    actor_loss_awr(logp, t(2, 2), t(-0.5, 1.5), 1.0).backward()
    assert (logp.grad < 0).all() and logp.grad[1] < logp.grad[0]
    assert logp.grad.tolist() == pytest.approx([-math.exp(-0.5) / 4, -math.exp(1.5) / 4])


def test_awr_actor_loss_clips_the_weight_and_its_gradient():
    logp = t(-2.0, -2.0).requires_grad_()
    loss = actor_loss_awr(logp, t(1, 1), t(3.5, 10.0), 1.0)  # both weights clip to 20
    assert loss.item() == pytest.approx(40.0)
    loss.backward()
    assert logp.grad.tolist() == pytest.approx([-10.0, -10.0])


def test_objective_selects_the_form():
    reward, mc_return, terminal = t(1, 0), t(2.71, 0), torch.tensor([True, False])
    logits_next = torch.randn(2, 2, 2)
    official, paper = Objective(), Objective("paper", beta=0.5)
    assert official.critic_loss(LOGITS, logits_next, reward, mc_return) == critic_loss_official(
        LOGITS, logits_next, torch.tensor([1, 0])
    )
    assert paper.critic_loss(LOGITS, logits_next, reward, mc_return) == critic_loss_paper(LOGITS, reward)
    v, v_next = t(0.5, 0.5), t(0.5, 0.5)
    assert official.advantage(v, v_next, reward, mc_return, terminal).tolist() == pytest.approx([1, -0.6])
    assert paper.advantage(v, v_next, reward, mc_return, terminal).tolist() == pytest.approx([0.5, -0.25])
    loss, stats = paper.actor_loss(t(-1), t(-3), t(2), t(1.0))
    assert loss.item() == pytest.approx(0.0) and stats["log_ratio"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="official"):
        Objective("ppo")


def test_objective_awr_form():
    awr = Objective("awr", awr_temperature=2.0)
    reward, mc_return, terminal = t(1, 0), t(1.9, 0), torch.tensor([False, True])
    logits_next = torch.randn(2, 2, 2)  # unused: the paper's critic on s only
    assert awr.critic_loss(LOGITS, logits_next, reward, mc_return) == critic_loss_paper(LOGITS, reward)
    # V = 0.5 and 0.25 from LOGITS: A = 1 − 0.5 and 0 − 0.25; neither v_next nor mc_return enters
    v = value_from_logits(LOGITS)
    assert awr.advantage(v, torch.rand(2), reward, mc_return, terminal).tolist() == pytest.approx([0.5, -0.25])
    # τ = 2: w = e^1 and e^−1;  ℓ/n = −1 and −2;  L = −(−e − 2/e)/2
    logp = t(-2.0, -6.0).requires_grad_()
    loss, stats = awr.actor_loss(logp, t(-4.0, -6.0), t(2, 3), t(2.0, -2.0))
    assert loss.item() == pytest.approx((math.e + 2 / math.e) / 2)
    # log ratio (2 + 0) / 5 tokens; half positive; mean weight (e + 1/e)/2
    assert stats == pytest.approx({"log_ratio": 0.4, "positive_fraction": 0.5, "beta": (math.e + 1 / math.e) / 2})
    loss.backward()  # no reference term: ℓ_ref does not change the gradient
    assert logp.grad.tolist() == pytest.approx([-math.e / 4, -math.exp(-1) / 6])


@pytest.mark.parametrize("form, temperature", [("ppo", 1.0), ("AWR", 1.0), ("awr", 0.0), ("awr", -1.0)])
def test_objective_rejects_an_invalid_form_or_temperature(form, temperature):
    with pytest.raises(ValueError, match="official" if form != "awr" else "awr_temperature"):
        Objective(form, awr_temperature=temperature)


# ---- real optimizer steps on the tiny model --------------------------------------------------------------


def one_batch(tokenizer, *pairs):
    return collate([encode(tokenizer, p, r, 128) for p, r in pairs], pad_token_id(tokenizer))


POSITIVE = ("Task Instruction: buy milk\n", 'do(action="Click", element="3")')
NEGATIVE = ("Task Instruction: sell bread\n", 'exit(message="no")')


def grads(model, batch, advantage, logp_ref):
    model.zero_grad()
    logp, n_tokens = action_logprobs(model, batch)
    loss, stats = actor_loss_official(logp, logp_ref, n_tokens, advantage)
    loss.backward()
    return [p.grad.clone() for p in model.parameters()], stats


def test_official_actor_loss_ascends_until_the_log_ratio_reaches_one_over_beta0(tokenizer, model):
    batch = one_batch(tokenizer, POSITIVE)
    with torch.no_grad():
        logp_ref, n_tokens = action_logprobs(model, batch)
    assert math.exp(logp_ref.item() / n_tokens.item()) < 0.8  # a random model: β0 = 1, stop at 1 nat per token
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ratios = []
    for _ in range(60):
        gradients, stats = grads(model, batch, t(1.0), logp_ref)
        ratios.append(stats["log_ratio"])
        if stats["log_ratio"] >= 1.0:
            break
        assert any(g.abs().sum() > 0 for g in gradients)
        optimizer.step()
    assert ratios[-1] >= 1.0 and ratios[1] > ratios[0] == 0.0
    assert all(torch.count_nonzero(g) == 0 for g in gradients)  # settled: exactly zero gradient


def test_negative_samples_contribute_nothing(tokenizer, model):
    with torch.no_grad():
        logp_ref, _ = action_logprobs(model, one_batch(tokenizer, POSITIVE, NEGATIVE))
    alone, _ = grads(model, one_batch(tokenizer, POSITIVE), t(1.0), logp_ref[:1])
    mixed, _ = grads(model, one_batch(tokenizer, POSITIVE, NEGATIVE), t(1.0, -0.6), logp_ref)
    for a, m in zip(alone, mixed):  # the batch mean halves the positive sample's share; nothing else differs
        torch.testing.assert_close(m, a / 2, rtol=1e-4, atol=1e-7)
    negative, stats = grads(model, one_batch(tokenizer, NEGATIVE), t(-0.6), logp_ref[1:])
    assert stats["positive_fraction"] == 0.0 and all(torch.count_nonzero(g) == 0 for g in negative)
    before = [p.detach().clone() for p in model.parameters()]
    torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0).step()  # decay would move them regardless
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))
