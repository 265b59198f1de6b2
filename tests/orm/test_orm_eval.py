"""`webrl orm eval`: the scores on hand-computed cases, and the command's numbers on a hand-labelled set against the
trained ORM's own predictions."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from orm_support import orm_cli, synthetic_examples

from webrl.orm.data import write_examples
from webrl.orm.evaluate import binary_scores, score_table
from webrl.orm.model import OutcomeRewardModel


def test_scores_by_hand():
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    predictions = [1, 1, 1, 0, 1, 1, 0, 0, 0, 0]  # tp 3, fn 1, fp 2, tn 4
    scores = binary_scores(labels, predictions)
    assert scores == pytest.approx(
        {
            "n": 10,
            "accuracy": 0.7,
            "precision": 0.6,
            "recall": 0.75,
            "f1": 2 / 3,
            "majority": 0.6,
            "tp": 3,
            "fp": 2,
            "fn": 1,
            "tn": 4,
        }
    )
    never = binary_scores([1, 0, 0], [0, 0, 0])  # no YES at all: precision and F1 are 0, not an error
    assert (never["precision"], never["recall"], never["f1"], never["accuracy"]) == (0.0, 0.0, 0.0, 2 / 3)


def test_sites_are_webrl_columns_in_order():
    rows = [
        {"site": site, "label": label, "reward": pred}
        for site, label, pred in [("Other", 1, 1), ("OSS", 1, 0), ("CMS", 0, 0), ("OSS", 0, 0), ("Reddit", 1, 1)]
    ]
    table = score_table(rows)
    assert list(table) == ["Overall", "Reddit", "CMS", "OSS", "Other"]
    assert (table["OSS"]["n"], table["OSS"]["accuracy"], table["Overall"]["accuracy"]) == (2, 0.5, 0.8)


@pytest.mark.slow  # trains an ORM first
def test_orm_eval_command_on_a_hand_labelled_set(trained, tmp_path):
    """Eight trajectories whose labels follow the page, two of them relabelled by hand (a judge the ORM must
    disagree with): the report's numbers are those of the ORM's own p(YES)."""
    examples = synthetic_examples(8, seed=11)
    examples[0], examples[1] = (replace(e, label=1 - e.label) for e in examples[:2])
    data = tmp_path / "hand.jsonl"
    write_examples(data, examples)
    orm = OutcomeRewardModel.load(str(trained["out"] / "orm"))
    rewards = orm.rewards(examples)
    assert rewards[2:] == [e.label for e in examples[2:]] and rewards[:2] != [e.label for e in examples[:2]]

    run = orm_cli(
        tmp_path,
        "eval",
        "--orm",
        str(trained["out"] / "orm"),
        "--data",
        str(data),
        "--out",
        str(tmp_path / "report.json"),
    )
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    labels = [e.label for e in examples]
    assert report["scores"]["Overall"] == pytest.approx(binary_scores(labels, rewards))
    assert report["scores"]["Overall"]["accuracy"] == 0.75
    assert [p["reward"] for p in report["predictions"]] == rewards
    assert [p["p_yes"] for p in report["predictions"]] == pytest.approx(orm.p_yes(examples), abs=1e-5)
    admin = [i for i, e in enumerate(examples) if e.sites == ("shopping_admin",)]
    assert report["scores"]["CMS"] == pytest.approx(
        binary_scores([labels[i] for i in admin], [rewards[i] for i in admin])
    )
    assert list(report["scores"]) == ["Overall", "CMS", "OSS"]
    assert re.search(r"Overall\s+8\s+0\.750", run.stdout) and "CMS" in run.stdout and "OSS" in run.stdout


def test_orm_eval_bad_data_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"intent": "a", "responses": ["exit()"], "html": "<p/>"}) + "\n")
    run = orm_cli(tmp_path, "eval", "--orm", "tiny", "--data", str(bad))
    assert run.returncode == 2 and f"{bad}:1: missing field 'label'" in run.stderr
