"""The harness before and after a change, measured alternately in one run: `bench/throughput.py` (oracle steps/s at
2 workers on a sample of each task set) and `bench/step.py` (the cost of one step) in two checkouts, taking turns
round by round, so that the machine's noise falls on both alike.

    .venv/bin/python bench/before_after.py --before ../webrl-old [--rounds 3] [--out bench/results/NAME.json]

`--before` is another checkout of webrl with its own `.venv` (`git worktree add ../webrl-old COMMIT`, then
`scripts/install.sh` there) whose benches take `--json` (add this commit's bench/ to it if it is older). Prints the
mean of each number over the rounds, before and after, with their ratio, and writes them with both commits' stamps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table
from stamp import stamp, write_result  # bench/ is on sys.path when a bench runs

HERE = Path(__file__).resolve().parent.parent
TASKS = ["embedded:test", "miniwob:test"]
STEP_PARTS = ["act", "settle", "observe", "total"]


def measure(checkout: Path, episodes: int, scratch: Path) -> dict[str, float]:
    """One round in `checkout`: {number's name: value}."""
    python = str(checkout / ".venv" / "bin" / "python")
    throughput, step = scratch / "throughput.json", scratch / "step.json"
    subprocess.run(
        [
            python,
            str(checkout / "bench" / "throughput.py"),
            "--tasks",
            *TASKS,
            "--episodes",
            str(episodes),
            "--workers",
            "2",
            "--json",
            str(throughput),
        ],
        cwd=checkout,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [python, str(checkout / "bench" / "step.py"), "--json", str(step)],
        cwd=checkout,
        check=True,
        capture_output=True,
    )
    numbers = {}
    for name, by_workers in json.loads(throughput.read_text())["workers"].items():
        numbers[f"{name}: oracle steps/s"] = by_workers["2"]["steps_per_s"]
        numbers[f"{name}: episodes/s"] = by_workers["2"]["episodes_per_s"]
        numbers[f"{name}: oracle success"] = by_workers["2"]["success"] / by_workers["2"]["episodes"]
    parts = json.loads(step.read_text())["parts"]
    numbers.update({f"step: {part} median ms": parts[part]["median_ms"] for part in STEP_PARTS})
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare this one with")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each runs both checkouts, in turn first")
    parser.add_argument("--episodes", type=int, default=40, help="oracle episodes per task set and round")
    parser.add_argument("--out", type=Path, default=HERE / "bench" / "results" / "before-after.json")
    args = parser.parse_args()
    console = Console()
    checkouts = {"before": args.before.resolve(), "after": HERE}
    rounds: dict[str, list[dict]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(args.rounds):
            for label in ["before", "after"] if r % 2 == 0 else ["after", "before"]:
                with console.status(f"round {r + 1}/{args.rounds}: {label}"):
                    rounds[label].append(measure(checkouts[label], args.episodes, Path(scratch)))
    means = {label: {k: statistics.mean(run[k] for run in runs) for k in runs[0]} for label, runs in rounds.items()}
    table = Table(
        title=f"before ({stamp(checkouts['before'])['commit']}) and after ({stamp()['commit']}), "
        f"alternating, mean of {args.rounds} rounds"
    )
    for column in ("number", "before", "after", "after / before"):
        table.add_column(column, justify="left" if column == "number" else "right")
    for name in means["after"]:
        before, after = means["before"][name], means["after"][name]
        table.add_row(name, f"{before:.3g}", f"{after:.3g}", f"{after / before:.2f}" if before else "-")
    console.print(table)
    write_result(
        args.out, {"bench": "before_after", "before": stamp(checkouts["before"]), "rounds": rounds, "means": means}
    )
    console.print(f"written: {args.out}")


if __name__ == "__main__":
    main()
