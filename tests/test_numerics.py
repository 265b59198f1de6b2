"""webrl pins torch's CPU code paths (webrl.numerics), so that a seed gives the same bits on any x86-64 processor
with AVX2. Each check runs a fresh process, as the pin must act before torch's first operation."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from webrl.numerics import PINNED, cpu_has

pytestmark = pytest.mark.skipif(not cpu_has("avx2"), reason="the pin applies to x86-64 processors with AVX2 only")

# What a webrl process runs with: torch's capability and MKL's branch.
PATHS = "import os, webrl, torch; print(torch.backends.cpu.get_cpu_capability(), os.environ['MKL_CBWR'])"
# A few AdamW steps of a small random Llama, the kind of work a CPU run does; prints the weights' digest.
TRAIN_STEPS = """
import hashlib, webrl, torch
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                     num_attention_heads=2, num_key_value_heads=1)
model = LlamaForCausalLM(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    ids = torch.randint(0, 512, (4, 96))
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    optimizer.zero_grad()
digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
print(torch.backends.cpu.get_cpu_capability(), digest)
"""


def run(code: str, **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in PINNED and k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=clean | env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_a_webrl_process_uses_the_avx2_paths_of_torch_and_mkl():
    assert run(PATHS) == ["AVX2", "AVX2"]


def test_a_variable_the_user_set_wins():
    assert run(PATHS, ATEN_CPU_CAPABILITY="default", MKL_CBWR="COMPATIBLE") == ["DEFAULT", "COMPATIBLE"]


def test_training_gives_the_same_bits_at_any_thread_count():
    one, three = run(TRAIN_STEPS, OMP_NUM_THREADS="1"), run(TRAIN_STEPS, OMP_NUM_THREADS="3")
    assert one[0] == "AVX2" and one == three
    if cpu_has("avx512f"):  # the pin is what the bits depend on: AVX-512's differ
        assert run(TRAIN_STEPS, ATEN_CPU_CAPABILITY="avx512", OMP_NUM_THREADS="1")[1] != one[1]
