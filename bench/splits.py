"""Does the CPU demo's learning hold where nobody tuned it? The cpu-demo preset's SFT demonstrates 14 of its 20
MiniWoB++ environments and leaves 6 for the curriculum to bring; that split was chosen by hand. This bench draws
other splits at random (split seed k: 14 of the 20, the rest new), runs the preset on each, and reports held-out
success after each phase and the gain of the last phase over the SFT actor, per split and overall (mean ± std).

Each (split, training seed) is one `webrl train --preset cpu-demo --demo-tasks ...` run; a second training seed of
a split continues a copy of its first seed's phase 0 (bench/compare.py's fork), so seeds of one split differ in
their curriculum only. Runs are resumable: an interrupted bench continues where it stopped. The sites must be up
(`webrl up --instances 2`).

    .venv/bin/python bench/splits.py --splits preset 1 2 3 --seeds 0 --out runs/splits

Prints the table and writes bench/results/splits.json (stamped), which docs/results.md's tables are made from.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from compare import COMPARED, fork
from rich.table import Table
from stamp import write_result

from webrl.cli.console import make_console
from webrl.runs.train_report import eval_rate
from webrl.train.recipe import METRICS_FILE, PROGRESS_FILE
from webrl.train.settings import SETTINGS_FILE, RunSettings, deep_merge, read_settings
from webrl.train.settings import preset as preset_settings

PRESET = "cpu-demo"
RESULT = Path(__file__).parent / "results" / "splits.json"


def environments(task_set: str) -> list[str]:
    """The environments of a `miniwob:ENV,...:SPLIT` task set."""
    return task_set.split(":")[1].split(",")


def demonstrated(split: str, preset: RunSettings) -> list[str]:
    """The environments split `split` demonstrates: the preset's own, or as many drawn at random with seed `split`."""
    own = environments(preset.demo_tasks)
    if split == "preset":
        return own
    return sorted(random.Random(int(split)).sample(environments(preset.train_tasks), len(own)))


def finished(run: Path, phases: int) -> bool:
    progress = run / PROGRESS_FILE
    return progress.is_file() and f"{phases}:eval" in json.loads(progress.read_text())["done"]


def run_split(split: str, seed: int, first_seed: int, preset: RunSettings, out: Path) -> Path:
    """The run folder of (split, seed), trained to the end."""
    run = out / f"split-{split}" / f"seed-{seed}"
    demo_tasks = f"miniwob:{','.join(demonstrated(split, preset))}:train"
    if not finished(run, preset.phases):
        if seed != first_seed and not (run / SETTINGS_FILE).is_file():
            base = out / f"split-{split}" / f"seed-{first_seed}"
            fork(base, run, RunSettings.model_validate(deep_merge(read_settings(base).model_dump(), {"seed": seed})))
        command = ["train", "--resume", "--out", str(run)]
        if not (run / SETTINGS_FILE).is_file():
            command = ["train", "--preset", PRESET, "--demo-tasks", demo_tasks, "--seed", str(seed), "--out", str(run)]
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "webrl", *command], check=True, stdout=subprocess.DEVNULL)
        make_console().print(f"split {split} seed {seed}: {time.monotonic() - started:.0f} s")
    return run


def curve(run: Path) -> dict[str, list[float | None]]:
    metrics = json.loads((run / METRICS_FILE).read_text())
    return {column: [eval_rate(m, column) for m in metrics] for column in COMPARED}


def mean_std(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(statistics.mean(values), 1),
        "std": round(statistics.stdev(values) if len(values) > 1 else 0.0, 1),
        "n": len(values),
    }


def summarise(runs: dict[str, dict[int, dict]]) -> dict:
    """The gain of the last phase over phase 0 (the SFT actor) on all held-out episodes, per split and overall."""
    gains = {split: [c["Average"][-1] - c["Average"][0] for c in seeds.values()] for split, seeds in runs.items()}
    return {
        "per_split": {split: mean_std(values) for split, values in gains.items()},
        "overall": mean_std([g for values in gains.values() for g in values]),
        "splits_gaining": sum(statistics.mean(values) > 0 for values in gains.values()),
    }


def show(result: dict) -> None:
    table = Table(title="cpu-demo over role splits: held-out success (%) after each phase, and the gain over SFT")
    for heading in ("split", "seed", "new envs", "phase 0 → last (all)", "new envs 0 → last", "gain"):
        table.add_column(heading, justify="left" if heading in ("split", "new envs") else "right")
    for split, seeds in result["runs"].items():
        new = ", ".join(result["splits"][split]["new"])
        for seed, c in seeds.items():
            path = " → ".join(f"{v:.1f}" for v in c["Average"])
            news = f"{c['new envs'][0]:.1f} → {c['new envs'][-1]:.1f}"
            table.add_row(split, str(seed), new, path, news, f"{c['Average'][-1] - c['Average'][0]:+.1f}")
    make_console().print(table)
    overall = result["summary"]["overall"]
    make_console().print(
        f"gain over SFT: {overall['mean']:+.1f} ± {overall['std']:.1f} points over {overall['n']} runs; "
        f"{result['summary']['splits_gaining']} of {len(result['runs'])} splits gain on average"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["preset", "1", "2", "3"], help="'preset' or a split seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="training seeds per split")
    parser.add_argument("--out", type=Path, default=Path("runs/splits"))
    parser.add_argument("--result", type=Path, default=RESULT)
    args = parser.parse_args()
    preset = RunSettings.model_validate(preset_settings(PRESET))
    result: dict = {"bench": "splits", "preset": PRESET, "splits": {}, "runs": {}}
    for seed in args.seeds:  # seed by seed: a bench stopped early has every split at least once
        for split in args.splits:
            shown = demonstrated(split, preset)
            new = [e for e in environments(preset.train_tasks) if e not in shown]
            result["splits"][split] = {"demonstrated": shown, "new": new}
            run = run_split(split, seed, args.seeds[0], preset, args.out)
            result["runs"].setdefault(split, {})[seed] = curve(run)
            result["summary"] = summarise(result["runs"])
            write_result(args.result, result)
    show(result)


if __name__ == "__main__":
    main()
