"""The paper's comparison at equal budget (Table 1's ordering): WebRL against SFT alone, Filtered BC and AWR, and
WebRL's ablations (no replay buffer, no critic filter, the paper's objective), all from one SFT actor, with the same
phases, tasks per phase, rollouts and update settings, over several seeds.

Every arm is one `webrl train` run (`--init` the SFT actor, `--seed S`), so the comparison runs the recipe users run;
a finished run is reused (`--resume`), so an interrupted comparison continues where it stopped. The sites must be
up (`webrl up --instances N` for --parallel N).

    .venv/bin/python bench/compare.py --init runs/demo/phases/0/sft/actor --config bench/compare.yaml \
        --seeds 0 1 2 --out runs/compare [--arms webrl filtered-bc awr ...]

Prints the table of held-out success after each phase (mean ± std over seeds) and the final one, and writes
OUT/compare.json and OUT/compare.png (the mean curve per arm, the seeds' range shaded).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

# arm -> the `webrl train` flags that make it (the rest comes from --config and is the same for every arm)
ARMS: dict[str, tuple[str, ...]] = {
    "sft": ("--algorithm", "sft"),  # the SFT actor itself: phase 0's evaluation
    "webrl": ("--algorithm", "webrl"),
    "filtered-bc": ("--algorithm", "filtered-bc"),
    "awr": ("--algorithm", "awr"),
    "webrl, no replay": ("--algorithm", "webrl", "--no-replay"),
    "webrl, no critic filter": ("--algorithm", "webrl", "--no-critic-filter"),
    "webrl, paper objective": ("--algorithm", "webrl", "--objective", "paper"),
}


def run_arm(name: str, seed: int, args: argparse.Namespace) -> list[float]:
    """Held-out success after each phase of one arm and seed (phase 0 first)."""
    out = args.out / f"{name.replace(', ', '-').replace(' ', '-')}-seed{seed}"
    command = [sys.executable, "-m", "webrl", *(["--config", str(args.config)] if args.config else []), "train",
               *ARMS[name], "--init", str(args.init), "--seed", str(seed), "--out", str(out)]
    if (out / "settings.yaml").is_file():
        command.append("--resume")
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    metrics = json.loads((out / "metrics.json").read_text())
    return [m["eval"]["success_rate"]["Average"]["mean"] for m in metrics]


def mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.1f} ± {statistics.stdev(values) if len(values) > 1 else 0.0:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init", type=Path, required=True, help="the SFT actor every arm starts from")
    parser.add_argument("--config", type=Path, help="`webrl train` settings shared by every arm")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    parser.add_argument("--out", type=Path, default=Path("runs/compare"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    curves: dict[str, list[list[float]]] = {}
    for name in args.arms:
        # greedy evaluation of one actor: the SFT arm is the same for every seed
        seeds = args.seeds[:1] if name == "sft" else args.seeds
        curves[name] = [run_arm(name, seed, args) for seed in seeds]
        report(curves, args)


def report(curves: dict[str, list[list[float]]], args: argparse.Namespace) -> None:
    phases = max(len(c) for runs in curves.values() for c in runs)
    table = Table(title=f"held-out success (%) after each phase, mean ± std over seeds {args.seeds}")
    for column in ("arm", "seeds", *(f"phase {k}" for k in range(phases)), "final"):
        table.add_column(column, justify="left" if column == "arm" else "right")
    for name, runs in curves.items():
        cells = [mean_std([c[k] for c in runs]) if all(len(c) > k for c in runs) else "–" for k in range(phases)]
        table.add_row(name, str(len(runs)), *cells, mean_std([c[-1] for c in runs]))
    Console().print(table)
    (args.out / "compare.json").write_text(json.dumps({"seeds": args.seeds, "curves": curves}, indent=1))
    plot(curves, args.out / "compare.png")


def plot(curves: dict[str, list[list[float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    phases = max(len(c) for runs in curves.values() for c in runs)
    for name, runs in curves.items():
        if all(len(c) == 1 for c in runs):  # a fixed actor (SFT alone): a level line across the phases
            runs = [c * phases for c in runs]
        length = min(len(c) for c in runs)
        xs = list(range(length))
        means = [statistics.mean(c[k] for c in runs) for k in xs]
        ax.plot(xs, means, marker="o", label=name, linestyle="--" if name == "sft" else "-")
        ax.fill_between(xs, [min(c[k] for c in runs) for k in xs], [max(c[k] for c in runs) for k in xs], alpha=0.15)
    ax.set_xlabel("phase")
    ax.set_ylabel("held-out success (%)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
