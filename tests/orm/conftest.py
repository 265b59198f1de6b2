"""The tiny model as an ORM, untrained and trained (once per session, by `webrl orm train` as a user runs it)."""

from __future__ import annotations

import pytest
from orm_support import TRAIN_ARGS, orm_cli, synthetic_examples

from webrl.orm.data import write_examples
from webrl.orm.model import OutcomeRewardModel


@pytest.fixture(scope="session")
def untrained(tiny) -> OutcomeRewardModel:
    return OutcomeRewardModel.load(str(tiny))


@pytest.fixture(scope="session")
def trained(tiny, tmp_path_factory) -> dict:
    """`webrl orm train` on 64 synthetic trajectories; the run folder, its output and a held-out set."""
    root = tmp_path_factory.mktemp("orm-train")
    data, held_out = root / "train.jsonl", root / "held_out.jsonl"
    write_examples(data, synthetic_examples(64, seed=1))
    write_examples(held_out, synthetic_examples(48, seed=2))
    run = orm_cli(root, "train", "--data", str(data), "--model", str(tiny), "--out", str(root / "out"), *TRAIN_ARGS)
    assert run.returncode == 0, run.stderr
    return {"out": root / "out", "stdout": run.stdout, "held_out": held_out, "root": root}
