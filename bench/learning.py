"""Does training make the CPU model better? The learning benchmark: held-out success before and after RL, with 95%
confidence intervals, over several splits of the environments and several seeds, every arm from one SFT actor.

Environments come in skill families (clicking by quoted text, tabs, typed text, several clicks); split k holds out
one environment of every family (the k-th of a fixed shuffle of the family, so splits differ) and demonstrates the
rest, so that every held-out environment has a demonstrated sibling. The position-prior environments (solved by
where the answer usually is, not by reading) are demonstrated in every split and reported apart.

Per (split, seed):
1. the base: `webrl train --preset PRESET --algorithm sft` (phase 0: the oracle's demonstrations, N per demonstrated
   environment; the SFT actor, its weights drawn from the seed; its greedy evaluation on --final-seeds test seeds of
   every environment);
2. the gates' measure of that SFT actor: pass@4 at temperature 1 on the held-out environments' test seeds;
3. every arm (WebRL with the official and the paper objective, Filtered BC, AWR) continues a copy of the base's phase
   0 (bench/compare.py's fork) with `webrl train --resume`: its phases, each evaluated on the 10 test seeds, the last
   on the final ones.
The seed varies the initialisation, the demonstrations' order and the curriculum. Every run folder lives under --out
(default ~/.cache/webrl-bench/learning, outside the checkout): an interrupted bench continues where it stopped.

Reported, per arm: the gain (last phase − SFT) on the held-out non-trivial environments, per run and its mean over
runs with a 95% interval from a hierarchical bootstrap (splits, then seeds within a split, then held-out environments
within a run, then test seeds within an environment, the SFT and final outcomes of a seed resampled together), and
the paired difference of two arms (WebRL − Filtered BC) the same way; the gates (G1: the SFT actor succeeds on
≥ 80% of the demonstrated non-trivial environments' episodes; G2: on the held-out ones it succeeds greedily on
≤ 40% and finds a success in 4 samples on ≥ 30% of the tasks; G3: the SFT actors of one split land within 3
points of each other, over all environments). Beside the headline, not pre-registered: the same gains on the
demonstrated non-trivial environments. `--summarize RESULT.json [MORE.json ...]` recomputes the summaries and gates
from the outcomes result files hold, running nothing; several files' runs are combined into one result.

    .venv/bin/webrl up --instances 2
    .venv/bin/python bench/learning.py --splits 0 1 2 --seeds 0 1 2 --json bench/results/learning.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
from compare import ARMS, arm_settings, fork
from rich.table import Table
from stamp import add_json_option, stamp, write_result

from webrl.cli.console import make_console
from webrl.runs.records import read_episodes
from webrl.runs.train_metrics import read_metrics
from webrl.train.recipe import PROGRESS_FILE
from webrl.train.settings import SETTINGS_FILE, read_settings, write_settings

PRESET = "cpu-demo"
FAMILIES = {
    "quoted text": ["click-button", "click-link", "click-dialog-2", "click-test-transfer", "click-option"],
    "tabs": ["click-tab", "click-tab-2-easy"],
    "typed text": ["enter-text", "enter-password", "login-user"],
    "several clicks": ["click-checkboxes", "click-button-sequence", "click-collapsible-nodelay"],
}
POSITION_PRIOR = ["click-test", "click-test-2", "click-dialog", "focus-text", "focus-text-2", "unicode-test"]
DEFAULT_ARMS = ("sft", "webrl", "paper-objective", "filtered-bc", "awr")
PAIRED = ("webrl", "filtered-bc")  # the difference the headline states beside the gains
PASS_AT = 4
GATES = {"G1": 80.0, "G2_greedy": 40.0, "G2_pass": 30.0, "G3": 3.0}
BOOTSTRAP = 10_000
OUTCOME = {True: "holds", False: "fails", None: "not measured yet"}
OUT = Path.home() / ".cache" / "webrl-bench" / "learning"
STAMP_FIELDS = ("commit", "date", "machine", "cores", "load_1min", "command")  # bench/stamp.py's provenance
COMBINED_ALIKE = ("preset", "families", "position_prior", "arms", "demos", "final_seeds")  # files combined must agree
EnvsOf = Callable[[dict], list[str]]  # a run's environments a summary is over


def held_out(families: dict[str, list[str]], split: int) -> list[str]:
    """Split `split`'s held-out environments: per family, the split-th of the family's fixed shuffle."""
    out = []
    for name, envs in families.items():
        order = sorted(envs)
        random.Random(f"family:{name}").shuffle(order)
        out.append(order[split % len(order)])
    return out


def task_set(envs: list[str], split: str, seeds: int | None = None) -> str:
    return f"miniwob:{','.join(envs)}:{split}" + (f":{seeds}" if seeds else "")


def webrl(*args: str) -> None:
    """`webrl ARGS` in a session of its own, so that stopping the bench stops the run and every process it started
    (a run left behind would fight the next bench for its folder)."""
    command = [sys.executable, "-m", "webrl", *args]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        returncode = child.wait()
    except BaseException:  # Ctrl-C, or SIGTERM (main turns it into SystemExit)
        with contextlib.suppress(ProcessLookupError):  # the run may have ended on its own meanwhile
            os.killpg(child.pid, signal.SIGTERM)
        child.wait()
        raise
    if returncode:
        raise subprocess.CalledProcessError(returncode, command)


def finished(run: Path, last: str) -> bool:
    progress = run / PROGRESS_FILE
    return progress.is_file() and last in json.loads(progress.read_text())["done"]


def base_run(args: argparse.Namespace, split: int, seed: int, envs: list[str], shown: list[str]) -> Path:
    """(split, seed)'s phase 0: demonstrations, the SFT actor and its evaluation on the final test seeds."""
    run = args.out / f"split-{split}" / f"seed-{seed}" / "sft"
    if not finished(run, "0:eval"):
        command = ["train", "--resume", "--out", str(run)]
        sibling = next((r for r in run.parent.parent.glob("seed-*/sft") if finished(r, "0:demos")), None)
        if not (run / SETTINGS_FILE).is_file() and sibling is not None:
            with_demos(sibling, run, seed)  # the split's demonstrations do not depend on the seed: made once
        elif not (run / SETTINGS_FILE).is_file():
            command = [
                "train", "--preset", args.preset, "--algorithm", "sft", "--seed", str(seed), "--out", str(run),
                "--train-tasks", task_set(envs, "train"),
                "--demo-tasks", task_set(shown, "train", args.demos),
                "--eval-tasks", task_set(envs, "test"),
                "--final-eval-tasks", task_set(envs, "test", args.final_seeds),
                *(["--config", str(args.settings)] if args.settings else []),
            ]  # fmt: skip
        webrl(*command)
    return run


def with_demos(source: Path, run: Path, seed: int) -> None:
    """A run folder holding `source`'s demonstrations and settings at `seed`, its SFT still to run."""
    staging = run.with_name(run.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "phases" / "0").mkdir(parents=True)
    shutil.copytree(source / "phases" / "0" / "demos", staging / "phases" / "0" / "demos")
    shutil.copy(source / "phases" / "0" / "demos.jsonl", staging / "phases" / "0" / "demos.jsonl")
    # the stage is done and took this run no time (stage_minutes counts what each run spent)
    (staging / PROGRESS_FILE).write_text(json.dumps({"done": {"0:demos": 0.0}}))
    write_settings(staging, read_settings(source).model_copy(update={"seed": seed}))
    staging.rename(run)


def sampled(args: argparse.Namespace, base: Path, new: list[str], seed: int) -> Path:
    """The SFT actor's PASS_AT samples at temperature 1 of every held-out test task (the gate G2)."""
    out = base.parent / f"pass-at-{PASS_AT}"
    settings = read_settings(base)
    if not (out / "summary.json").is_file():
        webrl(
            "eval", "--tasks", task_set(new, "test"), "--policy", f"hf:{base / 'phases' / '0' / 'sft' / 'actor'}",
            "--temperature", "1", "--repeats", str(PASS_AT), "--seed", str(seed), "--resume",
            "--observation", settings.observation, "--max-steps", str(settings.max_steps),
            "--max-tokens", str(settings.max_new_tokens), "--context", str(settings.max_tokens),
            "--parallel", str(settings.parallel), "--out", str(out),
        )  # fmt: skip
    return out


def arm_run(args: argparse.Namespace, base: Path, arm: str, seed: int) -> Path:
    """An arm's run: a copy of the base's phase 0 with the arm's settings, trained to its last phase."""
    if arm == "sft":
        return base
    settings = read_settings(base)
    run = base.with_name(arm)
    if not (run / SETTINGS_FILE).is_file():
        fork(base, run, arm_settings(settings, arm, seed))
    if not finished(run, f"{settings.phases}:eval"):
        webrl("train", "--resume", "--out", str(run))
    return run


def stage_minutes(run: Path) -> float:
    """Minutes the run's stages took (its progress file's record; a fork's copied phase 0 not counted again)."""
    done = json.loads((run / PROGRESS_FILE).read_text())["done"]
    copied = run.name != "sft"
    return sum(seconds for stage, seconds in done.items() if not (copied and stage.startswith("0:"))) / 60


def outcomes(eval_dir: Path) -> dict[str, dict[int, int]]:
    """env -> test seed -> 1 if the greedy episode succeeded (env errors count as failures: none are expected)."""
    table: dict[str, dict[int, int]] = defaultdict(dict)
    for record in read_episodes(eval_dir):
        env, _, seed = str(record.task_id).rpartition(".")
        table[env][int(seed)] = int(bool(record.success))
    return table


def last_eval(run: Path) -> Path:
    phases = len(read_metrics(run))
    return run / "phases" / str(phases - 1) / "eval"


def pass_at(run: Path) -> dict[str, float]:
    """env -> share (%) of its tasks with at least one success among their samples."""
    hits: dict[str, dict[str, bool]] = defaultdict(dict)
    for record in read_episodes(run):
        env = str(record.task_id).rpartition(".")[0]
        hits[env][str(record.task_id)] = hits[env].get(str(record.task_id), False) or bool(record.success)
    return {env: 100 * sum(tasks.values()) / len(tasks) for env, tasks in sorted(hits.items())}


def rate(table: dict[str, dict[int, int]], envs: list[str]) -> float:
    """Success (%) over the episodes of `envs`."""
    values = [v for env in envs for v in table.get(env, {}).values()]
    return 100 * sum(values) / len(values) if values else float("nan")


def encode(table: dict[str, dict[int, int]]) -> dict[str, str]:
    """Outcomes as one string per environment, test seed by test seed ("0110...")."""
    return {env: "".join(str(seeds[s]) for s in sorted(seeds)) for env, seeds in sorted(table.items())}


# -- the interval --------------------------------------------------------------------------------------------


def gain_samples(
    runs: dict[str, dict[str, dict]],
    arms: tuple[str, ...],
    envs_of: EnvsOf,
    rng: np.random.Generator,
    draws: int = BOOTSTRAP,
) -> np.ndarray:
    """Bootstrap draws of the mean over runs of (last − SFT) on each run's environments `envs_of(run)`, for one arm
    (arms = (arm,)) or the paired difference of two (arm − other): splits, seeds of a split, environments of a run
    and test seeds of an environment are each resampled with replacement; a test seed's outcomes under the SFT
    actor and under each arm move together."""
    # each (run, environment)'s outcome arrays, decoded once rather than in every draw
    outcomes = {
        (split, seed, env): {a: as_array(run[a][env]) for a in ("sft", *arms)}
        for split, seeds in runs.items()
        for seed, run in seeds.items()
        for env in envs_of(run)
    }
    splits = sorted(runs)
    out = np.empty(draws)
    for d in range(draws):
        gains = []
        for split in rng.choice(splits, len(splits)):
            seeds = sorted(runs[split])
            for seed in rng.choice(seeds, len(seeds)):
                envs = envs_of(runs[split][seed])
                per_env = []
                for env in rng.choice(envs, len(envs)):
                    arrays = outcomes[(split, seed, env)]
                    pick = rng.integers(0, len(arrays["sft"]), len(arrays["sft"]))
                    sft = arrays["sft"][pick].mean()
                    gain = [arrays[a][pick].mean() - sft for a in arms]
                    per_env.append(gain[0] - gain[1] if len(arms) == 2 else gain[0])
                gains.append(np.mean(per_env))
        out[d] = 100 * np.mean(gains)
    return out


def as_array(outcomes: str) -> np.ndarray:
    return np.frombuffer(outcomes.encode(), dtype=np.uint8) - ord("0")


def point_gain(run: dict, arms: tuple[str, ...], envs: list[str]) -> float:
    """A run's gain (arms = (arm,)) or paired difference (two arms), in points, over `envs`."""
    gains = [[np.mean(as_array(run[a][env])) - np.mean(as_array(run["sft"][env])) for env in envs] for a in arms]
    per_env = np.array(gains[0]) - (np.array(gains[1]) if len(arms) == 2 else 0)
    return float(100 * np.mean(per_env))


def interval(runs: dict[str, dict[str, dict]], arms: tuple[str, ...], envs_of: EnvsOf, seed: int = 0) -> dict:
    complete = {s: {k: r for k, r in seeds.items() if all(a in r for a in arms)} for s, seeds in runs.items()}
    complete = {s: seeds for s, seeds in complete.items() if seeds}
    points = [point_gain(r, arms, envs_of(r)) for seeds in complete.values() for r in seeds.values()]
    if not points:
        return {}
    draws = gain_samples(complete, arms, envs_of, np.random.default_rng(seed))
    low, high = np.percentile(draws, [2.5, 97.5])
    return {
        "mean": round(float(np.mean(points)), 1),
        "ci95": [round(float(low), 1), round(float(high), 1)],
        "runs": len(points),
        "runs_above_zero": sum(p > 0 for p in points),
        "per_run": [round(p, 1) for p in points],
    }


# -- the bench ------------------------------------------------------------------------------------------------


def demonstrated_nontrivial(result: dict, run: dict) -> list[str]:
    """The run's demonstrated environments of the skill families (G1's, and the demonstrated view's)."""
    return [e for envs in result["families"].values() for e in envs if e not in run["held_out"]]


def gates(result: dict) -> dict:
    """The gates, measured on every finished base run (the SFT actors)."""
    runs = [r for seeds in result["runs"].values() for r in seeds.values() if "sft" in r]
    if not runs:
        return {}
    g1 = [rate(decode(r["sft"]), demonstrated_nontrivial(result, r)) for r in runs]
    greedy = [rate(decode(r["sft"]), r["held_out"]) for r in runs]
    sampled_ = [float(np.mean([r["pass_at"][e] for e in r["held_out"]])) for r in runs if r.get("pass_at")]
    spreads = []
    for seeds in result["runs"].values():
        overall = [rate(decode(r["sft"]), list(r["sft"])) for r in seeds.values() if "sft" in r]
        if len(overall) > 1:
            spreads.append(max(overall) - min(overall))
    # holds: None where the gate has nothing to measure yet (no pass@4 samples; no split with two seeds)
    return {
        "G1": {"demonstrated_nontrivial": [round(v, 1) for v in g1], "holds": min(g1) >= GATES["G1"]},
        "G2": {
            "held_out_greedy": [round(v, 1) for v in greedy],
            f"held_out_pass_at_{PASS_AT}": [round(v, 1) for v in sampled_],
            "holds": max(greedy) <= GATES["G2_greedy"] and min(sampled_) >= GATES["G2_pass"] if sampled_ else None,
        },
        "G3": {
            "spread_within_split": [round(v, 1) for v in spreads],
            "holds": max(spreads) <= GATES["G3"] if spreads else None,
        },
    }  # fmt: skip


def summaries(result: dict, envs_of: EnvsOf) -> dict:
    """Per arm, its gain over SFT on each run's environments `envs_of(run)`, and the paired difference PAIRED."""
    runs, arms = result["runs"], result["arms"]
    return {
        **{f"gain {arm}": interval(runs, (arm,), envs_of) for arm in arms if arm != "sft"},
        f"{PAIRED[0]} − {PAIRED[1]}": interval(runs, PAIRED, envs_of) if set(PAIRED) <= set(arms) else {},
    }


def summarize(result: dict) -> None:
    """Fill in `result`'s summaries and gates from its runs: the headline on the held-out non-trivial environments;
    beside it, not pre-registered, the same on the demonstrated non-trivial ones (does RL improve what it saw?)."""
    result["summary"] = summaries(result, lambda run: run["held_out"])
    result["summary_demonstrated"] = summaries(result, lambda run: demonstrated_nontrivial(result, run))
    result["gates"] = gates(result)


def read_result(path: Path) -> dict:
    """A learning benchmark's result file (ValueError naming the file and what is wrong)."""
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    if not isinstance(result, dict) or result.get("bench") != "learning":
        raise ValueError(f'{path}: not a learning benchmark result (its "bench" field)')
    return result


def combine(paths: list[Path], results: list[dict]) -> dict:
    """One result from the runs of several (e.g. seeds measured in different sessions or on different machines).
    Their settings must agree and no (split, seed) may come twice; each file's stamp goes to `sources` with the runs
    it measured, and the combined file is stamped when written (ValueError naming the file and field)."""
    first = results[0]
    combined: dict = {k: v for k, v in first.items() if k not in (*STAMP_FIELDS, "summarized_by")}
    combined.update(runs={}, minutes={}, sources=[])
    for path, result in zip(paths, results, strict=True):
        for field in COMBINED_ALIKE:
            if result.get(field) != first.get(field):
                raise ValueError(f'{path}: its "{field}" differs from {paths[0]}\'s')
        for split, seeds in result["runs"].items():
            for seed, run in seeds.items():
                if seed in combined["runs"].get(split, {}):
                    raise ValueError(f"{path}: split {split} seed {seed} is in an earlier file too")
                combined["runs"].setdefault(split, {})[seed] = run
                if seed in result.get("minutes", {}).get(split, {}):
                    combined["minutes"].setdefault(split, {})[seed] = result["minutes"][split][seed]
        measured = [f"{split}/{seed}" for split, seeds in result["runs"].items() for seed in seeds]
        combined["sources"] += result.get("sources") or [
            {**{k: result[k] for k in STAMP_FIELDS if k in result}, "runs": measured}
        ]
    for key in ("runs", "minutes"):  # split by split, seed by seed, whatever order the files came in
        combined[key] = {
            split: dict(sorted(seeds.items(), key=lambda item: int(item[0])))
            for split, seeds in sorted(combined[key].items(), key=lambda item: int(item[0]))
        }
    return combined


def decode(envs: dict[str, str]) -> dict[str, dict[int, int]]:
    return {env: dict(enumerate(as_array(s).tolist())) for env, s in envs.items()}


def show(result: dict) -> None:
    console = make_console()
    table = Table(title="held-out non-trivial environments: success (%) after SFT and after the last phase")
    for heading in ("split", "seed", "held out", *result["arms"]):
        table.add_column(heading, justify="left" if heading in ("split", "held out") else "right")
    for split, seeds in result["runs"].items():
        for seed, run in seeds.items():
            cells = [f"{rate(decode(run[a]), run['held_out']):.1f}" if a in run else "–" for a in result["arms"]]
            table.add_row(split, seed, ", ".join(run["held_out"]), *cells)
    console.print(table)
    for scope, key in (("held out", "summary"), ("demonstrated", "summary_demonstrated")):
        for name, summary in result.get(key, {}).items():
            if summary:
                low, high = summary["ci95"]
                console.print(
                    f"{scope}, {name}: {summary['mean']:+.1f} points [{low:+.1f}, {high:+.1f}] over "
                    f"{summary['runs']} runs, {summary['runs_above_zero']} above 0"
                )
    for gate, measured in result["gates"].items():
        console.print(f"{gate}: {OUTCOME[measured['holds']]} {measured}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds per split")
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(DEFAULT_ARMS))
    parser.add_argument(
        "--family",
        action="append",
        metavar="NAME=ENV,ENV",
        help="a skill family (repeat; replaces the default families): one environment of each is held out per split",
    )
    parser.add_argument("--prior", metavar="ENV,ENV", help="the position-prior environments, demonstrated always")
    parser.add_argument("--preset", default=PRESET, help="the runs' settings (configs/NAME.yaml)")
    parser.add_argument("--demos", type=int, default=50, help="demonstrated seeds per environment")
    parser.add_argument(
        "--final-seeds", type=int, default=50, help="test seeds per environment after SFT and at the end"
    )
    parser.add_argument(
        "--settings",
        type=Path,
        help="a `webrl train` settings file over the preset (e.g. a smaller budget for a smoke)",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="run folders (outside the checkout; resumable)")
    parser.add_argument(
        "--summarize",
        type=Path,
        nargs="+",
        metavar="RESULT.json",
        help="run nothing: recompute the summaries and gates of this result file from the outcomes it holds, and "
        "write them back (or to --json); its stamp stays, the code that summarized it is added. Several files: "
        "their runs combined into one result (same settings, no run twice), each file's stamp kept in its sources",
    )
    add_json_option(parser)
    args = parser.parse_args()
    if args.summarize:
        try:
            results = [read_result(path) for path in args.summarize]
            result = combine(args.summarize, results) if len(results) > 1 else results[0]
        except ValueError as error:
            parser.error(f"--summarize {error}")
        summarize(result)
        result["summarized_by"] = stamp()["commit"]
        write_result(args.json or args.summarize[0], result)
        show(result)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    families = dict(f.split("=", 1) for f in args.family) if args.family else FAMILIES
    families = {name: envs.split(",") if isinstance(envs, str) else envs for name, envs in families.items()}
    prior = args.prior.split(",") if args.prior else POSITION_PRIOR
    envs = [e for family in families.values() for e in family] + prior
    result: dict = {
        "bench": "learning", "preset": args.preset, "families": families, "position_prior": prior,
        "arms": args.arms, "demos": args.demos, "final_seeds": args.final_seeds, "runs": {}, "minutes": {},
    }  # fmt: skip
    for seed in args.seeds:  # seed by seed: a bench stopped early has every split measured at least once
        for split in args.splits:
            new = held_out(families, split)
            shown = [e for e in envs if e not in new]
            base = base_run(args, split, seed, envs, shown)
            run = {"held_out": new, "sft": encode(outcomes(base / "phases" / "0" / "eval"))}
            run["pass_at"] = pass_at(sampled(args, base, new, seed))
            minutes = {"sft": stage_minutes(base)}
            for arm in [a for a in args.arms if a != "sft"]:
                folder = arm_run(args, base, arm, seed)
                run[arm], minutes[arm] = encode(outcomes(last_eval(folder))), stage_minutes(folder)
            result["runs"].setdefault(str(split), {})[str(seed)] = run
            result["minutes"].setdefault(str(split), {})[str(seed)] = {a: round(m, 1) for a, m in minutes.items()}
            summarize(result)
            for path in [args.out / "learning.json", *([args.json] if args.json else [])]:
                write_result(path, result)
    show(result)


if __name__ == "__main__":
    main()
