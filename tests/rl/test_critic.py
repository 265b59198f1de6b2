"""The critic on the tiny model: head shapes and init, the last-real-token read under any padding, save/load."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from webrl.rl.critic import Critic, last_real_index
from webrl.rl.data import Encoded, collate, encode_prompt, pad_token_id
from webrl.rl.objective import value_from_logits

PROMPTS = ["Task Instruction: buy milk", "short", "Task Instruction: a much longer observation " * 4]


@pytest.fixture(scope="module")
def critic(tiny):
    return Critic.from_pretrained(tiny).eval()


def observations(tokenizer, prompts):
    return [Encoded(encode_prompt(tokenizer, p, 256), 0) for p in prompts]


def left_padded(encoded, pad_id):
    """The same rows padded on the left instead."""
    length = max(len(e.input_ids) for e in encoded)
    ids = [[pad_id] * (length - len(e.input_ids)) + e.input_ids for e in encoded]
    mask = [[0] * (length - len(e.input_ids)) + [1] * len(e.input_ids) for e in encoded]
    return torch.tensor(ids), torch.tensor(mask)


def test_heads_take_their_width_from_the_config_and_the_official_init(critic, tiny):
    hidden = AutoModelForCausalLM.from_pretrained(tiny).config.hidden_size
    assert "lm_head.weight" not in dict(critic.named_parameters())  # trunk only: no LM head is trained
    for head in critic.heads:
        assert [tuple(head[i].weight.shape) for i in (0, 2, 4)] == [(hidden, hidden), (hidden, hidden), (2, hidden)]
        for i in (0, 2):
            assert head[i].bias.abs().sum() == 0
            assert head[i].weight.std().item() == pytest.approx(0.2, abs=0.01)
    assert not torch.equal(critic.heads[0][0].weight, critic.heads[1][0].weight)  # independent heads


def test_last_real_index_for_any_padding_side():
    mask = torch.tensor([[1, 1, 1, 0, 0], [0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert last_real_index(mask).tolist() == [2, 4, 4]


def test_value_of_a_row_is_the_same_alone_and_in_padded_batches(critic, tokenizer):
    encoded = observations(tokenizer, PROMPTS)
    pad = pad_token_id(tokenizer)
    with torch.no_grad():
        alone = torch.cat(
            [critic(torch.tensor([e.input_ids]), torch.ones(1, len(e.input_ids), dtype=torch.long)) for e in encoded]
        )
        right = collate(encoded, pad)
        right_logits = critic(right.input_ids, right.attention_mask)
        left_logits = critic(*left_padded(encoded, pad))
    assert right_logits.shape == (3, 2, 2)
    assert len({len(e.input_ids) for e in encoded}) == 3  # every row sees padding in at least one layout
    torch.testing.assert_close(right_logits, alone, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(left_logits, alone, rtol=1e-4, atol=1e-5)
    assert len(set(value_from_logits(alone).tolist())) == 3  # the rows really differ


def test_save_and_load_round_trip_atomically(critic, tokenizer, tmp_path):
    out = tmp_path / "critic"
    out.mkdir()
    (out / "stale.txt").write_text("from an older save")
    with torch.no_grad():
        critic.heads[0][4].bias.add_(0.5)  # a trained-looking change the round trip must keep
    critic.save(out, tokenizer)
    assert not (out / "stale.txt").exists()  # the folder was replaced, not merged into
    assert [p.name for p in tmp_path.iterdir()] == ["critic"]  # no staging folders left behind
    loaded = Critic.load(out).eval()
    batch = collate(observations(tokenizer, PROMPTS), pad_token_id(tokenizer))
    with torch.no_grad():
        torch.testing.assert_close(
            loaded(batch.input_ids, batch.attention_mask), critic(batch.input_ids, batch.attention_mask)
        )
        fresh = Critic.from_pretrained(out)  # the saved folder seeds a new critic: same trunk, new heads
        assert all(torch.equal(a, b) for a, b in zip(fresh.trunk.parameters(), critic.trunk.parameters()))
    assert AutoModelForCausalLM.from_pretrained(out).config.hidden_size == critic.trunk.config.hidden_size
    assert (out / "tokenizer.json").is_file()
