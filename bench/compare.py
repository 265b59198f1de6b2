"""The paper's comparison at equal budget (Table 1's ordering): WebRL against SFT alone, Filtered BC and AWR, and
WebRL's ablations (no replay buffer, no critic filter, the paper's objective), all from one SFT actor, with the same
phases, tasks per phase, rollouts and update settings, over several seeds.

Every arm starts from the same phase 0: that of a `webrl train` run given as --base (its demonstrations, SFT actor
and evaluation, e.g. the cpu-demo's). An arm's run folder is a copy of that phase 0 with the base's settings, the
arm's flags and the seed; the phases after it are `webrl train --resume`, so every arm runs the recipe users run, and
an interrupted comparison continues where it stopped. An arm whose settings are the base's own (webrl at the base's
seed) is the base run itself. The sites must be up (`webrl up --instances N` for the base's parallel N).

    .venv/bin/webrl train --preset cpu-demo --out runs/cpu-demo
    .venv/bin/python bench/compare.py --base runs/cpu-demo --seeds 0 1 2 --out runs/compare [--arms webrl awr ...]

Prints the table of held-out success after each phase (mean ± std over seeds) and the final one, and writes
OUT/compare.json and OUT/compare.png (the mean curve per arm, the seeds' range shaded).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from rich.table import Table
from stamp import add_json_option, write_result  # bench/ is on sys.path when a bench runs

from webrl.cli.console import make_console
from webrl.families.miniwob import ENVIRONMENT_COLUMNS
from webrl.layered_settings import deep_merge
from webrl.runs.train_metrics import read_metrics
from webrl.runs.train_report import eval_rate
from webrl.train.recipe import PROGRESS_FILE
from webrl.train.settings import SETTINGS_FILE, RunSettings, read_settings, write_settings

COMPARED = ("Average", *ENVIRONMENT_COLUMNS)  # held-out success columns: all episodes, demonstrated / new envs
# arm -> the settings that make it (the rest is the base run's, the same for every arm)
ARMS: dict[str, dict] = {
    "sft": {"algorithm": "sft"},  # the SFT actor itself: the base's phase 0 evaluation
    "webrl": {"algorithm": "webrl"},
    "filtered-bc": {"algorithm": "filtered-bc"},
    "awr": {"algorithm": "awr"},
    "no-replay": {"algorithm": "webrl", "update": {"replay": False}},
    "no-critic-filter": {"algorithm": "webrl", "critic_filter": False},
    "paper-objective": {"algorithm": "webrl", "update": {"objective": "paper"}},
    # the critic: ranking tasks (at 1e-5 it scores all alike) on the official data, or on this actor's own outcomes
    "critic-1e-4": {"algorithm": "webrl", "update": {"critic_lr": 1e-4, "critic_replay": True}},
    "own-critic": {"algorithm": "webrl", "update": {"critic_lr": 1e-4, "critic_replay": False}},
    # the replay of earlier successes: the paper's confidence band, or the surest ones too (the cpu-demo preset's)
    "paper-replay": {"algorithm": "webrl", "update": {"replay_confidence": (0.5, 0.95)}},
    "sure-replay": {"algorithm": "webrl", "update": {"replay_confidence": (0.5, 1.0)}},
    "orm-reward": {"algorithm": "webrl", "reward": "orm"},  # the ORM of --orm instead of the rules
    # group-relative objectives on 4 rollouts of a quarter of the tasks (the same episodes a phase, unless the
    # group-success band rolls out more candidates: up to candidate_factor times), and without that band (a random
    # sample of the generated tasks)
    "grpo": {"algorithm": "grpo", "group_size": 4},
    "gigpo": {"algorithm": "gigpo", "group_size": 4},
    "grpo-no-band": {"algorithm": "grpo", "group_size": 4, "critic_filter": False},
}
# without --arms: the paper's comparison and WebRL's ablations against the cpu-demo preset (the other arms compare
# settings an earlier preset had or the preset has now, where they repeat "webrl")
DEFAULT_ARMS = (
    "sft",
    "webrl",
    "filtered-bc",
    "awr",
    "no-replay",
    "no-critic-filter",
    "paper-objective",
    "paper-replay",
)


def arm_settings(base: RunSettings, name: str, seed: int, more: dict | None = None) -> RunSettings:
    """The base run's settings with arm `name`'s and the seed: a group arm rolls out as many episodes a phase as
    the others (tasks_per_phase / group_size tasks)."""
    arm = {**ARMS[name], **(more or {}), "seed": seed}
    if "group_size" in arm:
        arm["tasks_per_phase"] = max(1, base.tasks_per_phase // arm["group_size"])
    return RunSettings.model_validate(deep_merge(base.model_dump(), arm))


def fork(base: Path, out: Path, settings: RunSettings) -> None:
    """A run folder holding the base's phase 0 (no training checkpoints) and `settings`, to be continued."""
    done = json.loads((base / PROGRESS_FILE).read_text())["done"]
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(base / "phases" / "0", staging / "phases" / "0", ignore=shutil.ignore_patterns("checkpoints"))
    (staging / PROGRESS_FILE).write_text(json.dumps({"done": {k: v for k, v in done.items() if k.startswith("0:")}}))
    write_settings(staging, settings)
    staging.rename(out)


def run_arm(name: str, seed: int, args: argparse.Namespace) -> dict[str, list[float | None]]:
    """Held-out success after each phase of one arm and seed (phase 0 first): on average, and on the MiniWoB++
    environments the SFT demonstrated and on the new ones (None where a run did not measure them)."""
    base = read_settings(args.base)
    orm = {"orm": str(args.orm.resolve())} if name == "orm-reward" else {}
    settings = arm_settings(base, name, seed, orm)
    out = args.base if settings == base else args.out / f"{name}-seed{seed}"
    if name != "sft":
        if not (out / SETTINGS_FILE).is_file():
            fork(args.base, out, settings)
        subprocess.run(
            [sys.executable, "-m", "webrl", "train", "--resume", "--out", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    metrics = read_metrics(args.base if name == "sft" else out)
    chosen = metrics[:1] if name == "sft" else metrics
    return {column: [eval_rate(m, column) for m in chosen] for column in COMPARED}


def mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.1f} ± {statistics.stdev(values) if len(values) > 1 else 0.0:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base",
        type=Path,
        required=True,
        help="a `webrl train` run whose phase 0 is finished: every arm starts from it, with its settings",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(DEFAULT_ARMS))
    parser.add_argument("--orm", type=Path, help="the ORM of the orm-reward arm (bench/orm.py's OUT/orm/orm)")
    parser.add_argument("--out", type=Path, default=Path("runs/compare"))
    add_json_option(parser)
    args = parser.parse_args()
    if "orm-reward" in args.arms and args.orm is None:
        parser.error("the orm-reward arm needs --orm")
    args.out.mkdir(parents=True, exist_ok=True)
    curves: dict[str, dict[str, list[list[float]]]] = {column: {} for column in COMPARED}
    for index, seed in enumerate(args.seeds):  # seed by seed: a comparison stopped early has every arm at least once
        # greedy evaluation of one actor: the SFT arm is the same for every seed
        for name in [a for a in args.arms if a != "sft" or index == 0]:
            for column, curve in run_arm(name, seed, args).items():
                curves[column].setdefault(name, []).append(curve)
            report(curves, args)


def report(curves: dict[str, dict[str, list[list[float | None]]]], args: argparse.Namespace) -> None:
    """One table per measured column (the average first), compare.json and the average's plot."""
    for column, arms in curves.items():
        measured = {name: runs for name, runs in arms.items() if all(None not in c for c in runs)}
        if not measured:
            continue
        phases = max(len(c) for runs in measured.values() for c in runs)
        where = "" if column == "Average" else f" on the {column}"
        table = Table(title=f"held-out success (%){where} after each phase, mean ± std over seeds {args.seeds}")
        for heading in ("arm", "seeds", *(f"phase {k}" for k in range(phases)), "final"):
            table.add_column(heading, justify="left" if heading == "arm" else "right")
        for name, runs in measured.items():
            cells = [mean_std([c[k] for c in runs]) if all(len(c) > k for c in runs) else "–" for k in range(phases)]
            table.add_row(name, str(len(runs)), *cells, mean_std([c[-1] for c in runs]))
        make_console().print(table)
    result = {
        "bench": "compare",
        "seeds": args.seeds,
        "curves": curves["Average"],
        "environments": {column: curves[column] for column in ENVIRONMENT_COLUMNS},
    }
    for path in (args.out / "compare.json", *([args.json] if args.json else [])):
        write_result(path, result)
    plot(curves, args.out / "compare.png")


def plot(curves: dict[str, dict[str, list[list[float | None]]]], path: Path) -> None:
    """The mean curve per arm (the seeds' range shaded): all held-out episodes, and beside them the new
    environments' where every run measured them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        c
        for c in ("Average", "new envs")
        if curves[c] and all(None not in c for runs in curves[c].values() for c in runs)
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), dpi=110, squeeze=False)
    for ax, column in zip(axes[0], panels, strict=True):
        phases = max(len(c) for runs in curves[column].values() for c in runs)
        for name, runs in curves[column].items():
            if all(len(c) == 1 for c in runs):  # a fixed actor (SFT alone): a level line across the phases
                runs = [c * phases for c in runs]
            xs = list(range(min(len(c) for c in runs)))
            means = [statistics.mean(c[k] for c in runs) for k in xs]
            ax.plot(xs, means, marker="o", label=name, linestyle="--" if name == "sft" else "-")
            ax.fill_between(
                xs, [min(c[k] for c in runs) for k in xs], [max(c[k] for c in runs) for k in xs], alpha=0.15
            )
        ax.set_xticks(range(phases))
        ax.set_xlabel("phase")
        ax.set_ylabel("held-out success (%)")
        ax.set_title("all held-out episodes" if column == "Average" else "environments the SFT never saw", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
