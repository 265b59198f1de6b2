"""The tiny model's tokenizer and a fresh copy of its weights, for the trainer's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tokenizer(tiny):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny)


@pytest.fixture
def model(tiny):
    """A fresh copy per test: the training tests change its weights."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny).eval()
