"""The tiny random Llama (built once per session) and its tokenizer, for the trainer's tests."""

from __future__ import annotations

import pytest

from webrl.models import resolve_model


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """The folder of the `tiny` model: a ~0.8M-parameter random Llama with a byte-level BPE tokenizer."""
    return resolve_model("tiny", tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def tokenizer(tiny):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny)


@pytest.fixture
def model(tiny):
    """A fresh copy per test: the training tests change its weights."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny).eval()
