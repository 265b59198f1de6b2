"""`webrl orm eval`: the ORM against the rule evaluators' labels, overall and per site (paper Table 3).

Success (label 1) is the positive class: precision is the share of the ORM's YES that the rules also call a
success, recall the share of rule successes the ORM finds. Sites are WebRL's table columns (a task counts
under its first site). `majority` is the accuracy of always answering the set's more common label: an ORM
is only useful above it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from webrl.files import write_atomically
from webrl.orm.data import Example, load_examples
from webrl.orm.model import OutcomeRewardModel, encode_examples, reward
from webrl.tasks.family import default_family

OVERALL = "Overall"
METRICS = ("n", "accuracy", "precision", "recall", "f1", "majority", "tp", "fp", "fn", "tn")


def _ratio(part: int, whole: int) -> float:
    """part / whole, 0 when there is nothing to divide (sklearn's zero_division=0)."""
    return part / whole if whole else 0.0


def binary_scores(labels: Sequence[int], predictions: Sequence[int]) -> dict[str, float | int]:
    """Accuracy, precision, recall, F1 (success positive), the majority-class accuracy and the confusion counts."""
    pairs = list(zip(labels, predictions, strict=True))
    tp, fp = pairs.count((1, 1)), pairs.count((0, 1))
    fn, tn = pairs.count((1, 0)), pairs.count((0, 0))
    n = len(pairs)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return {
        "n": n,
        "accuracy": _ratio(tp + tn, n),
        "precision": precision,
        "recall": recall,
        "f1": _ratio(2 * precision * recall, precision + recall),
        "majority": _ratio(max(tp + fn, fp + tn), n),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def score_table(rows: list[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    """Scores of the prediction rows ({site, label, reward}) overall and per site column, in WebRL's order."""
    table = {OVERALL: binary_scores([r["label"] for r in rows], [r["reward"] for r in rows])}
    for column in default_family().success_columns:
        mine = [r for r in rows if r["site"] == column]
        if mine:
            table[column] = binary_scores([r["label"] for r in mine], [r["reward"] for r in mine])
    return table


def predict(orm: OutcomeRewardModel, examples: Sequence[Example]) -> tuple[list[dict[str, Any]], int]:
    """One prediction row per example that fits the ORM's token limit, and how many did not fit."""
    encoded = encode_examples(orm.tokenizer, examples, orm.max_tokens)
    kept = [(example, ids) for example, ids in zip(examples, encoded, strict=True) if ids is not None]
    p_yes = orm.p_yes_ids([ids for _, ids in kept])
    rows = [
        {
            "task_id": example.task_id,
            "source": example.source,
            "site": default_family().success_column(example),
            "label": example.label,
            "p_yes": p,
            "reward": reward(p),
        }
        for (example, _), p in zip(kept, p_yes, strict=True)
    ]
    return rows, len(examples) - len(kept)


def run_orm_eval(
    orm_spec: str,
    data: list[Path],
    out: Path,
    max_tokens: int | None = None,
    batch_size: int = 4,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Score every labelled example of `data` with the ORM; write and return the report (scores per site,
    counts of skipped episodes, and every prediction)."""
    loaded = load_examples(data)
    orm = OutcomeRewardModel.load(orm_spec, cache_dir, max_tokens, batch_size)
    rows, too_long = predict(orm, loaded.examples)
    report = {
        "orm": orm_spec,
        "data": [str(path) for path in data],
        "max_tokens": orm.max_tokens,
        "skipped_episodes": dict(loaded.skipped),
        "skipped_too_long": too_long,
        "scores": score_table(rows) if rows else {},
        "predictions": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out, json.dumps(report, indent=2) + "\n")
    return report
