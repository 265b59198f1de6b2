"""`webrl train`: the whole WebRL run, phase after phase, with no manual step (reference/webrl-method.md §2).

Phase 0: the scripted solutions of the train tasks are rolled out (the oracle, in the same environment as
every other rollout) and their successful steps are the demonstrations; SFT on them gives the first actor
(unless `init` names one); the actor is evaluated. Phase k ≥ 1:

1. tasks     phase 1 samples the train split (D0); later phases generate candidates from the previous phase's
             failed tasks (the procedural evolver or an LLM), check their feasibility (with a judge), keep
             those the previous critic scores in the band, topped up with the closest others if the band
             holds too few (a young critic scores nearly everything alike), and cap them at tasks_per_phase.
2. rollouts  the actor samples (temperature 1) in parallel environments with per-episode resets.
3. rewards   rule evaluators where the task has them, else the ORM (rl.rollouts); the step file.
4. update    webrl / awr: `webrl rl-update` (critic, then actor, with the filtered replay of the
             demonstrations and every earlier phase's steps); filtered-bc: `webrl sft` from the actor on the
             phase's successful trajectories (the 70th percentile and above).
5. eval      the new actor, greedy, on the evaluation tasks.

Training runs as a child process (`python -m webrl sft|rl-update`): the same commands a user runs by hand, the
DeepSpeed launcher for `procs` > 1, and all of a stage's memory returned when it ends.

Run folder: settings.yaml (resolved), progress.json (finished stages and their seconds), phases/<k>/{tasks.json,
rollouts/, steps.jsonl, rewards.json, update/, eval/, metrics.json}, metrics.json (every phase), curve.png,
report.html. A stage's results are written before it is marked finished, and every stage can be re-run from
what is on disk: rollouts and evaluations continue their episodes file, training continues from its
checkpoints, sampling is seeded per answer. So `--resume` after a kill anywhere finishes with what an
uninterrupted run gives.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml

from webrl.errors import UsageError, WebrlError
from webrl.rl.checkpoint import write_atomically
from webrl.rl.rollouts import Rewarded, read_episodes, reward_episodes, reward_summary, write_steps
from webrl.rl.settings import RunSettings, TrainSettings
from webrl.tasks.model import Task

SETTINGS_FILE, PROGRESS_FILE, METRICS_FILE = "settings.yaml", "progress.json", "metrics.json"
START_PAGES_FILE = "start-pages.json"  # the observed start page of every candidate task, once per run
FILTERED_BC_PERCENTILE = 70  # the paper's Filtered BC threshold (Table 4)
DEMO_MAX_STEPS = 30  # the scripted solutions' limit, whatever the rollouts' is
TRAININGS = ("sft", "update")  # the stages that train, each into phases/<k>/<stage>/


class Progress(Protocol):
    """What the loop tells a live view."""

    def stage(self, phase: int, name: str) -> None: ...

    def episodes(self, total: int) -> None: ...  # the stage under way runs `total` episodes

    def episode(self, success: bool | None) -> None: ...

    def phase_done(self, metrics: dict) -> None: ...


class Silent:
    def stage(self, phase: int, name: str) -> None:
        pass

    def episodes(self, total: int) -> None:
        pass

    def episode(self, success: bool | None) -> None:
        pass

    def phase_done(self, metrics: dict) -> None:
        pass


def read_settings(out: Path) -> RunSettings:
    path = Path(out) / SETTINGS_FILE
    if not path.is_file():
        raise UsageError(f"{out}: not a webrl train run folder (no {SETTINGS_FILE}); start a run there without --resume")
    return RunSettings.model_validate(yaml.safe_load(path.read_text()))


def train_flags(settings: TrainSettings) -> list[str]:
    """TrainSettings as the command-line options of `webrl sft` / `webrl rl-update`."""
    flags = []
    for name, value in settings.model_dump().items():
        option = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            flags.append(option if value else "--no-" + name.replace("_", "-"))
        elif isinstance(value, (tuple, list)):
            flags += [option, *map(str, value)]
        else:
            flags += [option, str(value)]
    return flags


def percentile_threshold(rewards: Sequence[float], percentile: float) -> float:
    """The reward at `percentile` (nearest rank) of the episodes' rewards."""
    ordered = sorted(rewards)
    rank = max(1, math.ceil(percentile / 100 * len(ordered)))
    return ordered[rank - 1]


def valid_action_rate(rows: Sequence[dict]) -> float | None:
    """The percentage of answers that parsed as an action: what a small model learns first, long before it
    succeeds at a task."""
    steps = [step for row in rows for step in row["steps"]]
    if not steps:
        return None
    return round(100 * sum(not (step.get("error") or "").startswith("unparseable") for step in steps) / len(steps), 1)


class TrainRun:
    """One run folder and the stages that fill it (module docstring)."""

    def __init__(self, settings: RunSettings, out: Path, config, backend, progress: Progress | None = None):
        self.settings, self.out, self.config, self.backend = settings, Path(out), config, backend
        self.progress = progress or Silent()
        self.models_dir = Path(config.state_dir) / "models"
        path = self.out / PROGRESS_FILE
        self.done: dict[str, float] = json.loads(path.read_text())["done"] if path.exists() else {}
        self._suite: list[Task] | None = None

    # ---- the run -----------------------------------------------------------------------------------------

    @classmethod
    def start(cls, settings: RunSettings, out: Path, config, backend, progress: Progress | None = None,
              resume: bool = False) -> TrainRun:
        out = Path(out)
        if resume:
            settings = read_settings(out)
        elif (out / SETTINGS_FILE).exists():
            raise UsageError(f"{out} holds a run already: continue it with --resume --out {out}, or choose another --out")
        else:
            out.mkdir(parents=True, exist_ok=True)
            write_atomically(out / SETTINGS_FILE, yaml.safe_dump(settings.model_dump(mode="json"), sort_keys=False))
        return cls(settings, out, config, backend, progress)

    def run(self) -> list[dict]:
        """Every stage not finished yet; the metrics of every phase."""
        if self.backend.running() is None:
            raise UsageError("the sites are not running; start them with `webrl up"
                             + (f" --instances {self.settings.parallel}`" if self.settings.parallel > 1 else "`"))
        if self.settings.init is None or self.settings.algorithm in ("webrl", "awr"):  # SFT data, replay buffer
            self._stage(0, "demos", self.demos)
        if self.settings.init is None:
            self._stage(0, "sft", self.sft)
        self._stage(0, "eval", self.evaluate, 0)
        self._finish_phase(0)
        for k in range(1, self.phases + 1):
            self._stage(k, "tasks", self.make_tasks, k)
            self._stage(k, "rollouts", self.rollouts, k)
            self._stage(k, "rewards", self.rewards, k)
            self._stage(k, "update", self.update, k)
            self._stage(k, "eval", self.evaluate, k)
            self._finish_phase(k)
        return self.all_metrics()

    @property
    def phases(self) -> int:
        return 0 if self.settings.algorithm == "sft" else self.settings.phases

    def _stage(self, phase: int, name: str, work: Callable[..., Any], *args: Any) -> None:
        key = f"{phase}:{name}"
        if key in self.done:
            return
        self.progress.stage(phase, name)
        began = time.perf_counter()
        work(*args)
        self.done[key] = round(time.perf_counter() - began, 1)
        write_atomically(self.out / PROGRESS_FILE, json.dumps({"done": self.done}, indent=1))
        if name in TRAININGS and not self.settings.keep_checkpoints:
            # Only after the stage is marked done: a training killed before that resumes from them.
            shutil.rmtree(self.phase_dir(phase) / name / "checkpoints", ignore_errors=True)

    def phase_dir(self, k: int) -> Path:
        path = self.out / "phases" / str(k)
        path.mkdir(parents=True, exist_ok=True)
        return path

    # ---- models of each phase ----------------------------------------------------------------------------

    def actor(self, k: int) -> str:
        """The actor after phase k: its update's, else the one before (a phase with nothing to learn from)."""
        if k == 0:
            return self.settings.init or str(self.phase_dir(0) / "sft" / "actor")
        updated = self.phase_dir(k) / "update" / "actor"
        return str(updated) if updated.is_dir() else self.actor(k - 1)

    def critic(self, k: int) -> Path | None:
        """The critic after phase k (webrl and awr train one), else the latest before it, else None."""
        for j in range(k, 0, -1):
            path = self.phase_dir(j) / "update" / "critic"
            if path.is_dir():
                return path
        return None

    # ---- tasks -------------------------------------------------------------------------------------------

    def suite(self) -> list[Task]:
        """The embedded suite of the running sites' data."""
        if self._suite is None:
            from webrl.tasks.load import resolve_task_set

            plan = self.backend.running()
            self._suite = resolve_task_set("embedded", self.config.state_dir, plan.seed if plan else 0)
        return self._suite

    def train_tasks(self) -> list[Task]:
        return [t for t in self.suite() if t.split == "train"]

    def eval_tasks(self) -> list[Task]:
        from webrl.tasks.load import resolve_task_set

        if self.settings.eval_tasks.startswith("embedded"):
            tasks = [t for t in self.suite() if self.settings.eval_tasks == "embedded"
                     or t.split == self.settings.eval_tasks.partition(":")[2]]
        else:
            tasks = resolve_task_set(self.settings.eval_tasks, self.config.state_dir)
        if self.settings.eval_limit and self.settings.eval_limit < len(tasks):  # a fixed sample, spread over the sites
            rng = random.Random(f"eval:{self.settings.seed}")
            tasks = sorted(rng.sample(tasks, self.settings.eval_limit), key=lambda t: str(t.task_id))
        return tasks

    def phase_tasks(self, k: int) -> list[Task]:
        path = self.phase_dir(k) / "tasks.json"
        return [Task.model_validate(c) for c in json.loads(path.read_text())] if path.exists() else []

    def _write_tasks(self, k: int, tasks: Sequence[Task], report: dict) -> None:
        write_atomically(self.phase_dir(k) / "tasks.json", json.dumps([t.to_config() for t in tasks]))
        write_atomically(self.phase_dir(k) / "tasks-report.json", json.dumps(report, indent=1, default=str))

    def make_tasks(self, k: int) -> None:
        """Phase k's tasks (module docstring, stage 1)."""
        settings = self.settings
        rng = random.Random(f"tasks:{settings.seed}:{k}")
        train = self.train_tasks()
        if k == 1:
            picked = sorted(rng.sample(train, min(settings.tasks_per_phase, len(train))), key=lambda t: t.task_id)
            self._write_tasks(k, picked, {"source": "train split", "kept": len(picked)})
            return
        failed = [item.row["task_id"] for item in self._rewarded(k - 1) if item.reward is not None and item.reward < 0.5]
        by_id = {t.task_id: t for t in self.phase_tasks(k - 1)}
        failed_tasks = list({i: by_id[i] for i in failed if i in by_id}.values())
        candidates, report = self._generate(k, failed_tasks)
        candidates, report["feasibility"] = self._feasible(candidates)
        kept, report["critic"] = self._critic_filter(k, candidates)
        if not kept:  # nothing failed, or nothing new: the train split again, so the phase still learns
            kept = sorted(rng.sample(train, min(settings.tasks_per_phase, len(train))), key=lambda t: t.task_id)
            report["fallback"] = "no new tasks: sampled the train split"
        report["kept"] = len(kept)
        self._write_tasks(k, kept, report)

    def _seen_tasks(self, k: int) -> list[Task]:
        return self.suite() + [t for j in range(1, k) for t in self.phase_tasks(j)]

    def _generate(self, k: int, failed: list[Task]) -> tuple[list[Task], dict]:
        from webrl.curriculum.seen import Seen, next_task_id

        settings = self.settings
        known = self._seen_tasks(k)
        seen, first_id = Seen(known), next_task_id(known)
        want = math.ceil(settings.tasks_per_phase * settings.candidate_factor)
        report: dict[str, Any] = {"failed_seeds": len(failed), "generator": settings.generator}
        if not failed:
            return [], report
        if settings.generator == "evolver":
            from webrl.curriculum.evolve import Evolver

            plan = self.backend.running()
            evolver = Evolver.from_snapshots(Path(self.config.state_dir) / "snapshots", plan.seed, settings.seed)
            tasks, evolved = evolver.evolve(failed, seen, first_id=first_id, keep=want, phase=k)
            report |= {"made": dict(evolved.made), "made_by_site": dict(evolved.made_by_site),
                       "skipped_seeds": dict(evolved.skipped)}
        else:
            from webrl.curriculum.generate import generate_tasks, make_generator

            generator = make_generator(settings.generator, self.models_dir)
            try:
                tasks, generated = generate_tasks(failed, generator, seen, first_id=first_id, keep=want,
                                                  seed=settings.seed, phase=k)
            finally:
                if hasattr(generator, "close"):
                    generator.close()
            report |= {"calls": generated.calls, "found": generated.found, "errors": generated.errors,
                       "rejected": dict(generated.rejected), "kept_by_site": dict(generated.kept_by_site)}
        report["candidates"] = len(tasks)
        return tasks, report

    def _feasible(self, tasks: list[Task]) -> tuple[list[Task], dict]:
        """With a judge: the feasibility filter. Without one, generated tasks go unchecked (the paper checked
        them by hand; procedural tasks are feasible by construction)."""
        from webrl.curriculum.filters import feasibility_filter
        from webrl.evaluators.judge import parse_judge_spec

        judge = parse_judge_spec(self.settings.judge)
        if judge is None:
            return tasks, {"checked": False}
        kept, reasons = feasibility_filter(tasks, judge)
        return kept, {"checked": True, "kept": len(kept), "outcomes": dict(reasons)}

    def _critic_filter(self, k: int, tasks: list[Task]) -> tuple[list[Task], dict]:
        """The previous critic's band, topped up by the candidates closest to it; capped at tasks_per_phase."""
        settings = self.settings
        critic_dir = self.critic(k - 1)
        if critic_dir is None or not tasks:
            return tasks[:settings.tasks_per_phase], {"applied": False}
        import torch

        from webrl.curriculum.filters import critic_filter, in_band, stored_start_pages
        from webrl.models import load_tokenizer, quiet
        from webrl.rl.critic import Critic

        pages = stored_start_pages(tasks, self.backend, self.out / START_PAGES_FILE)
        with quiet():
            critic = Critic.load(critic_dir, torch.float32)
        inside, scores = critic_filter(tasks, pages, critic, load_tokenizer(critic_dir), band=settings.critic_band,
                                       rule=settings.critic_rule, max_tokens=settings.max_tokens)
        del critic
        low, high = settings.critic_band
        outside = [t for t, s in sorted(((t, s) for t, s in zip(tasks, scores)
                                         if not in_band(s, settings.critic_band, settings.critic_rule)),
                                        key=lambda pair: min(abs(pair[1].value - low), abs(pair[1].value - high)))]
        kept = (inside + outside)[:settings.tasks_per_phase]
        values = [s.value for s in scores]
        return kept, {"applied": True, "critic": str(critic_dir), "scored": len(tasks), "in_band": len(inside),
                      "topped_up": max(0, len(kept) - len(inside)), "value_min": min(values),
                      "value_mean": sum(values) / len(values), "value_max": max(values)}

    # ---- episodes ----------------------------------------------------------------------------------------

    def _episodes(self, out: Path, tasks: Sequence[Task], policy_spec: str, *, temperature: float, max_steps: int,
                  seed: int | None) -> dict:
        """`webrl eval`'s runner over `tasks` into `out` (continuing what is there); its summary."""
        from webrl.evaluators.judge import parse_judge_spec
        from webrl.policy.base import make_policy, serving
        from webrl.runs.eval import EvalSettings, run_eval

        settings = EvalSettings(tasks=str(out), policy=policy_spec, backend=self.config.sites.backend,
                                parallel=self.settings.parallel, max_steps=max_steps, judge=self.settings.judge,
                                temperature=temperature, max_tokens=self.settings.max_new_tokens, seed=seed, out=out,
                                resume=True, screenshots=False)
        self.progress.episodes(len(tasks))
        policy = make_policy(policy_spec, self.models_dir)
        try:
            with serving(policy):
                return asyncio.run(run_eval(settings, list(tasks), self.backend, policy,
                                            parse_judge_spec(self.settings.judge),
                                            lambda row: self.progress.episode(
                                                row["score"] == 1.0 if row["status"] == "done" else None)))
        finally:
            del policy
            gc.collect()

    def _policy(self, k: int) -> str:
        return f"{self.settings.rollout_policy}:{self.actor(k)}"

    def demos(self) -> None:
        """The scripted solutions of (a sample of) the train tasks, rolled out; successful steps → demos.jsonl."""
        train = [t for t in self.train_tasks() if t.cheat]
        if self.settings.sft_tasks is not None and self.settings.sft_tasks < len(train):
            rng = random.Random(f"sft:{self.settings.seed}")
            train = sorted(rng.sample(train, self.settings.sft_tasks), key=lambda t: t.task_id)
        out = self.phase_dir(0) / "demos"
        self._episodes(out, train, "oracle", temperature=0.0, max_steps=DEMO_MAX_STEPS, seed=None)
        rewarded = reward_episodes(read_episodes(out), {t.task_id: t for t in train})
        write_steps(self.phase_dir(0) / "demos.jsonl", rewarded, successful_only=True)

    def rollouts(self, k: int) -> None:
        self._episodes(self.phase_dir(k) / "rollouts", self.phase_tasks(k), self._policy(k - 1),
                       temperature=self.settings.temperature, max_steps=self.settings.max_steps,
                       seed=self.settings.seed * 1000 + k)

    def evaluate(self, k: int) -> None:
        self._episodes(self.phase_dir(k) / "eval", self.eval_tasks(), self._policy(k), temperature=0.0,
                       max_steps=self.settings.max_steps, seed=None)

    def _rewarded(self, k: int) -> list[Rewarded]:
        return [Rewarded(row=r["row"], reward=r["reward"], source=r["source"], rule=r["rule"], orm=r["orm"])
                for r in json.loads((self.phase_dir(k) / "rewarded.json").read_text())]

    def rewards(self, k: int) -> None:
        """Each rollout's reward (rl.rollouts), the phase's step file and the reward summary."""
        orm = None
        tasks = {t.task_id: t for t in self.phase_tasks(k)}
        if self.settings.orm is not None:
            from webrl.orm.model import OutcomeRewardModel

            orm = OutcomeRewardModel.load(self.settings.orm, self.models_dir, self.settings.max_tokens)
        rewarded = reward_episodes(read_episodes(self.phase_dir(k) / "rollouts"), tasks, orm)
        del orm
        slim = [{"row": {key: item.row[key] for key in ("task_id", "repeat", "status", "score")},
                 "reward": item.reward, "source": item.source, "rule": item.rule, "orm": item.orm} for item in rewarded]
        write_steps(self.phase_dir(k) / "steps.jsonl", rewarded)
        write_atomically(self.phase_dir(k) / "rewarded.json", json.dumps(slim))
        write_atomically(self.phase_dir(k) / "rewards.json", json.dumps(reward_summary(rewarded), indent=1))

    # ---- training ----------------------------------------------------------------------------------------

    def _train(self, command: list[str], log: Path) -> None:
        """One `webrl` training command as a child process; its output goes to `log`."""
        from webrl.rl.engine import DIST_VARIABLES

        full = [sys.executable, "-m", "webrl", "--state-dir", str(self.config.state_dir), *command]
        env = {k: v for k, v in os.environ.items() if k not in DIST_VARIABLES}  # its own process group, not ours
        with log.open("a") as sink:
            sink.write("$ " + " ".join(full) + "\n")
            sink.flush()
            code = subprocess.run(full, env=env, stdout=sink, stderr=subprocess.STDOUT, check=False).returncode
        if code != 0:
            tail = "".join(log.read_text().splitlines(keepends=True)[-8:])
            raise WebrlError(f"`webrl {command[0]}` failed (exit {code}); the end of {log}:\n{tail}")

    def _common(self, settings: TrainSettings) -> list[str]:
        extra = ["--procs", str(self.settings.procs)]
        if self.settings.max_tokens is not None:
            extra += ["--max-tokens", str(self.settings.max_tokens)]
        return [*train_flags(settings), *extra]

    def sft(self) -> None:
        demos = self.phase_dir(0) / "demos.jsonl"
        if not demos.read_text().strip():
            raise WebrlError(f"{demos}: no demonstrations (no scripted solution succeeded); see "
                             f"{self.phase_dir(0) / 'demos' / 'report.html'}")
        self._train(["sft", "--data", str(demos), "--model", self.settings.model, "--out",
                     str(self.phase_dir(0) / "sft"), *self._common(self.settings.sft)], self.phase_dir(0) / "sft.log")

    def update(self, k: int) -> None:
        """The phase's training (module docstring, stage 4); nothing to learn from leaves the actor as it was."""
        settings, phase = self.settings, self.phase_dir(k)
        steps = phase / "steps.jsonl"
        out = phase / "update"
        if settings.algorithm == "filtered-bc":
            rewarded = [r for r in self._rewarded(k) if r.reward is not None]
            threshold = percentile_threshold([r.reward for r in rewarded], FILTERED_BC_PERCENTILE) if rewarded else 1.0
            keep = {(r.row["task_id"], r.row["repeat"]) for r in rewarded if r.reward >= max(threshold, 0.5)}
            lines = [line for line in steps.read_text().splitlines() if line and self._episode_key(line) in keep]
            data = phase / "filtered-bc.jsonl"
            write_atomically(data, "".join(line + "\n" for line in lines))
            if lines:
                self._train(["sft", "--data", str(data), "--model", self.actor(k - 1), "--out", str(out),
                             *self._common(settings.update)], phase / "update.log")
            return
        if not steps.read_text().strip():
            return
        replay = [self.phase_dir(0) / "demos.jsonl", *(self.phase_dir(j) / "steps.jsonl" for j in range(1, k))]
        replay = [p for p in replay if p.exists() and p.read_text().strip()]
        objective = "awr" if settings.algorithm == "awr" else settings.objective
        critic = self.critic(k - 1)
        self._train(["rl-update", "--data", str(steps), "--actor", self.actor(k - 1), "--out", str(out),
                     "--objective", objective, "--beta", str(settings.beta),
                     *(["--critic", str(critic)] if critic else []),
                     *[flag for path in replay for flag in ("--replay", str(path))],
                     *self._common(settings.update)], phase / "update.log")

    @staticmethod
    def _episode_key(line: str) -> tuple[int | str, int]:
        record = json.loads(line)
        return record["task_id"], int(record["episode"].rpartition("-")[2])

    # ---- metrics -----------------------------------------------------------------------------------------

    def _finish_phase(self, k: int) -> None:
        phase = self.phase_dir(k)
        summary = json.loads((phase / "eval" / "summary.json").read_text())
        metrics: dict[str, Any] = {
            "phase": k, "algorithm": self.settings.algorithm, "actor": self.actor(k),
            "eval": {"success_rate": summary["success_rate"], "episodes": summary["episodes"],
                     "valid_actions": valid_action_rate(read_episodes(phase / "eval"))},
            "seconds": {key.partition(":")[2]: s for key, s in self.done.items() if key.startswith(f"{k}:")},
        }
        for name in ("rewards.json", "tasks-report.json"):
            if (phase / name).exists():
                metrics[name.removesuffix(".json")] = json.loads((phase / name).read_text())
        for name in ("update", "sft"):
            if (phase / name / "metrics.json").exists():
                trained = json.loads((phase / name / "metrics.json").read_text())
                metrics["training"] = {key: value for key, value in trained.items() if key != "settings"}
        if (phase / "demos.jsonl").exists():
            metrics["demonstrations"] = sum(1 for _ in (phase / "demos.jsonl").open())
        write_atomically(phase / METRICS_FILE, json.dumps(metrics, indent=1, default=str))
        every = self.all_metrics()
        write_atomically(self.out / METRICS_FILE, json.dumps(every, indent=1, default=str))
        from webrl.runs.train_report import write_train_report

        write_train_report(self.out, self.settings, every)
        self.progress.phase_done(metrics)

    def all_metrics(self) -> list[dict]:
        phases = sorted((p for p in (self.out / "phases").glob("*/metrics.json")), key=lambda p: int(p.parent.name))
        return [json.loads(p.read_text()) for p in phases]
