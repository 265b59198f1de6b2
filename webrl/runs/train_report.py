"""A `webrl train` run's learning curve (curve.png) and report.html: the success rate on the evaluation tasks
after every phase, per WebRL column, beside the phase's rollout success rate and what each phase made."""

from __future__ import annotations

import io
from pathlib import Path

from webrl.files import write_atomically
from webrl.runs.report import render
from webrl.runs.train_metrics import PhaseMetrics


def eval_rate(metrics: PhaseMetrics, column: str = "Average") -> float | None:
    """A success-rate column: one of the task family's (a WebRL site column) or Average, or one of its groups
    (MiniWoB++: the environments the SFT saw or not)."""
    cell = metrics.eval.success_rate.get(column) or metrics.eval.environments.get(column)
    return cell.mean if cell else None


def eval_columns(phases: list[PhaseMetrics]) -> list[str]:
    """The success-rate columns some phase's evaluation measured, in its summary's order, then its groups: those
    of the run's task family (WebArena: the sites evaluated on, Other, Average; MiniWoB++: Average and the
    demonstrated / new environments), none left empty."""
    found = [column for m in phases for column in [*m.eval.success_rate, *m.eval.environments]]
    return list(dict.fromkeys(found))


def valid_actions(metrics: PhaseMetrics) -> float | None:
    return metrics.eval.valid_actions


def rollout_rate(metrics: PhaseMetrics) -> float | None:
    return metrics.rewards.success_rate if metrics.rewards else None


def write_curve(path: Path, title: str, phases: list[PhaseMetrics]) -> Path:
    """curve.png: evaluation success (average bold, per site thin), rollout success and the share of evaluation
    answers that parse as actions, against the phase."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    xs = [m.phase for m in phases]
    top = 0.0
    for column in eval_columns(phases):
        ys = [eval_rate(m, column) for m in phases]
        if any(y is not None for y in ys):
            top = max([top, *(y for y in ys if y is not None)])
            average = column == "Average"
            ax.plot(
                xs,
                [float("nan") if y is None else y for y in ys],
                marker="o",
                linewidth=2.5 if average else 1,
                alpha=1 if average else 0.6,
                label=f"eval: {column}",
            )
    rollouts = [(m.phase, rollout_rate(m)) for m in phases if rollout_rate(m) is not None]
    if rollouts:
        top = max(top, *(y for _, y in rollouts))
        ax.plot(*zip(*rollouts), linestyle="--", marker="s", color="gray", label="rollouts (the phase's tasks)")
    valid = [(m.phase, valid_actions(m)) for m in phases if valid_actions(m) is not None]
    if valid:
        top = max(top, *(y for _, y in valid))
        ax.plot(*zip(*valid), linestyle=":", marker="^", color="black", label="valid actions (eval answers)")
    ax.set_xlabel("phase (0 = SFT)")
    ax.set_ylabel("%")
    ax.set_xticks(xs)
    ax.set_ylim(0, max(10.0, 1.15 * top))  # a flat zero curve still reads as percent
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    write_atomically(path, png.getvalue())
    return path


def write_train_report(out: Path, settings, phases: list[PhaseMetrics]) -> Path:
    write_curve(out / "curve.png", f"{settings.algorithm} from {settings.init or settings.model}", phases)
    return render(
        "train.html",
        out / "report.html",
        settings=settings.model_dump(mode="json"),
        phases=phases,
        columns=eval_columns(phases),
        eval_rate=eval_rate,
        rollout_rate=rollout_rate,
        valid_actions=valid_actions,
    )
