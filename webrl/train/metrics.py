"""What a phase of a `webrl train` run measured (phases/<k>/metrics.json), read off the phase's files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from webrl.files import read_json
from webrl.runs.records import EpisodeRecord, read_episodes
from webrl.runs.summary import read_summary
from webrl.runs.train_metrics import METRICS_FILE, PhaseMetrics, read_phase_metrics


def valid_action_rate(rows: Sequence[EpisodeRecord]) -> float | None:
    """The percentage of answers that parsed as an action: what a small model learns first, long before it
    succeeds at a task."""
    steps = [step for row in rows for step in row.steps]
    if not steps:
        return None
    return round(100 * sum(not (step.error or "").startswith("unparseable") for step in steps) / len(steps), 1)


def phase_metrics(
    phase: Path,
    k: int,
    algorithm: str,
    actor: str,
    seconds: dict[str, float],
    groups: Callable[[list[EpisodeRecord]], dict[str, dict]] = lambda records: {},
) -> PhaseMetrics:
    """The evaluation's success rates (also in the task family's `groups` of its episodes: MiniWoB++'s
    environments the SFT was shown and the others) and valid actions, the stages' seconds, the rewards, the task
    report, the training's summary and the number of demonstrations, where the phase has them."""
    summary = read_summary(phase / "eval")
    rows = read_episodes(phase / "eval")
    parts = {}
    for name in ("rewards.json", "tasks-report.json"):
        if (phase / name).exists():
            parts[name.removesuffix(".json")] = read_json(phase / name)
    for name in ("update", "sft"):
        if (phase / name / METRICS_FILE).exists():
            trained = read_json(phase / name / METRICS_FILE)
            parts["training"] = {key: value for key, value in trained.items() if key != "settings"}
    if (phase / "demos.jsonl").exists():
        parts["demonstrations"] = sum(1 for _ in (phase / "demos.jsonl").open())
    return PhaseMetrics.model_validate(
        {
            "phase": k,
            "algorithm": algorithm,
            "actor": actor,
            "eval": {
                "success_rate": summary.success_rate,
                "episodes": summary.episodes,
                "valid_actions": valid_action_rate(rows),
                "environments": groups(rows),
            },
            "seconds": seconds,
            **parts,
        }
    )


def all_metrics(out: Path) -> list[PhaseMetrics]:
    """Every finished phase's metrics, in phase order."""
    phases = sorted((p for p in (out / "phases").glob(f"*/{METRICS_FILE}")), key=lambda p: int(p.parent.name))
    return [read_phase_metrics(p) for p in phases]
