"""The settings of a `webrl train` run (RunSettings): the presets (configs/*.yaml), how a preset, the configuration,
a settings file and the options combine, and the file that holds the result in the run folder."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, model_validator

from webrl.errors import UsageError
from webrl.files import write_atomically
from webrl.layered_settings import Layers, deep_merge, resolve_layers
from webrl.policy.vllm import LORA_RANKS
from webrl.rl.settings import GROUP_FORMS, SftSettings, TrainSettings, UpdateSettings
from webrl.tasks.family import TaskFamily, family_of_set

SETTINGS_FILE = "settings.yaml"


Algorithm = Literal["webrl", "filtered-bc", "awr", "grpo", "gigpo", "sft"]
UPDATE_OBJECTIVES = ("awr", *GROUP_FORMS)  # the algorithms that are the update with the objective of their name


class RunSettings(BaseModel):
    """A `webrl train` run: where it starts, how many phases, and how each phase is made. The field
    descriptions are the CLI's help; a preset (configs/NAME.yaml) is a partial settings file applied first."""

    model_config = {"extra": "forbid"}

    algorithm: Algorithm = Field(
        "webrl",
        description="webrl (the curriculum, critic and KL-constrained actor "
        "update), filtered-bc (imitate the phase's successful rollouts, the 70th "
        "percentile and above), awr (advantage-weighted regression with the critic), grpo or gigpo (the "
        "group-relative objectives on --group-size rollouts of every task, no critic, no replay), or "
        "sft (phase 0 only).",
    )
    group_size: int = Field(
        1,
        ge=1,
        description="Rollouts of every task per phase, each from the same start (the sites reset before each, the "
        "same MiniWoB++ seed); grpo and gigpo compare them with each other and need at least 2.",
    )
    model: str = Field(
        "tiny",
        description="Model spec phase 0 fine-tunes on the suite's demonstrations (tiny, "
        "smollm2-135m, ORG/NAME, a folder).",
    )
    init: str | None = Field(
        None,
        description="Start from this model instead: no SFT (the demonstrations are still the phase-1 replay buffer).",
    )
    phases: int = Field(8, ge=0, description="RL phases after phase 0 (the paper: 8).")
    train_tasks: str = Field(
        "embedded:train",
        description="The train tasks: their scripted solutions are phase "
        "0's demonstrations and phase 1 samples them; later phases generate tasks of the same "
        "family from the failures. embedded:train (the suite), or miniwob[:ENV,...]:train "
        "(new seeds of the failed environments, and environments not met yet).",
    )
    demo_tasks: str | None = Field(
        None,
        description="Task set whose scripted solutions are phase 0's "
        "demonstrations [default: the train tasks]; on MiniWoB++ a subset of the train "
        "environments (miniwob:ENV,...:train), so that later phases meet environments the "
        "SFT never saw.",
    )
    sft_tasks: int | None = Field(
        None,
        ge=1,
        description="Demonstration tasks whose scripted solutions are the SFT demonstrations [default: all].",
    )
    tasks_per_phase: int = Field(
        500,
        ge=1,
        description="Tasks rolled out per phase (the paper: 500). Phase 1 "
        "samples the train split; later phases generate them from the failures.",
    )
    candidate_factor: float = Field(
        2.0,
        ge=1.0,
        description="Generate this many times --tasks-per-phase candidates, for the critic filter to choose from.",
    )
    generator: str = Field(
        "evolver",
        description="Task generator: evolver (new verifiable tasks of the train "
        "tasks' family), or an LLM for the embedded suite (openai:MODEL@URL, hf:SPEC, vllm:SPEC; "
        "its tasks are scored by --orm).",
    )
    orm: str | None = Field(
        None,
        description="Outcome reward model spec (e.g. a `webrl orm train` OUT/orm, or "
        "THUDM/webrl-orm-llama-3.1-8b): rewards tasks without rule evaluators and is recorded "
        "beside the rules' reward.",
    )
    reward: Literal["rules", "orm"] = Field(
        "rules",
        description="Whose verdict is each rollout's reward: rules (the "
        "task's evaluators; the ORM only where a task has none), or orm (the "
        "--orm model's everywhere, the rules' recorded beside it).",
    )
    judge: str = Field(
        "none", description="LLM judge (openai:MODEL@URL) for fuzzy/N/A answers and the feasibility filter."
    )
    mode: Literal["strict", "webarena", "vab", "browsergym"] = Field(
        "strict",
        description="Evaluator mode of every rollout, demonstration and evaluation, so of the rule rewards and the "
        "curriculum's and ORM's labels: strict (WebArena's rules with a guard against dumped answers and URLs) or a "
        "leaderboard mode, whose rules an agent can game (docs/evaluation.md).",
    )
    critic_band: tuple[float, float] = Field(
        (0.05, 0.75), description="Keep generated tasks whose critic value on the start page lies in this band."
    )
    critic_filter: bool = Field(
        True,
        description="Choose each phase's tasks by the critic band (grpo and gigpo, which train no critic: by the "
        "group-success band, candidates rolled out until --tasks-per-phase groups have a success rate strictly "
        "between 0 and 1); off (an ablation): a random sample of the candidates.",
    )
    critic_rule: Literal["value", "either"] = Field(
        "value", description="value: V = min of the two heads in the band; either: the official test (either head)."
    )
    rollout_policy: Literal["hf", "vllm"] = Field(
        "hf",
        description="Who serves the actor during rollouts and evaluation: hf (transformers in this process) or vllm.",
    )
    keep_rollout_server: bool = Field(
        False,
        description="With rollout_policy vllm: keep one vLLM server for the whole run, each stage's actor loaded "
        "on it (a LoRA adapter on the base it serves switched in place, in under a second; other weights "
        "restart it), instead of a server per stage. On a GPU the trainings then share the GPU with it. On the Ray "
        "executor, the run's pool of servers is kept, every server given each stage's actor.",
    )
    parallel: int = Field(1, ge=1, description="Episodes at once (needs `webrl up --instances N`).")
    max_steps: int = Field(30, ge=1, description="Step limit per episode (WebRL: 30).")
    observation: Literal["webrl", "compact"] = Field(
        "webrl",
        description="What the actor and the critic see of a page, in every rollout, demonstration and "
        "evaluation: webrl (VAB's simplified HTML, what WebRL trained on) or compact (the same without positions "
        "and repeated text: a small model reads it better; not VAB's, docs/fidelity.md).",
    )
    temperature: float = Field(1.0, ge=0.0, description="Rollout sampling temperature (the paper: 1).")
    max_new_tokens: int = Field(
        2048, ge=1, description="Token limit of each answer in rollouts and evaluations (WebRL: 2048)."
    )
    eval_tasks: str = Field("embedded:test", description="Task set each phase is evaluated on (greedy).")
    final_eval_tasks: str | None = Field(
        None,
        description="Task set phase 0 and the last phase are evaluated on instead of --eval-tasks [default: the "
        "same], so that the gain over SFT is measured on more episodes than the phases between (e.g. "
        "miniwob:ENV,...:test:50).",
    )
    eval_limit: int | None = Field(None, ge=1, description="Evaluate on a fixed sample of N of them only.")
    sft: SftSettings = Field(default_factory=SftSettings, description="Phase 0's SFT")
    update: UpdateSettings = Field(
        default_factory=UpdateSettings,
        description="Every phase's critic and actor "
        "update (webrl, awr, grpo and gigpo; Filtered BC trains with its engine settings)",
    )
    max_tokens: int | None = Field(None, ge=2, description="Token limit of prompt + response in training.")
    procs: int = Field(1, ge=1, description="Training processes per machine (DeepSpeed launcher, or Ray's placement).")
    nodes: int = Field(1, ge=1, description="Machines each training spans, procs on each (needs --executor ray).")
    seed: int = Field(
        0,
        description="Seeds task sampling, generation, rollouts and the trainings (their data order "
        "and a fresh critic's heads; it replaces sft.seed and update.seed).",
    )
    keep_checkpoints: bool = Field(
        False,
        description="Keep every finished training's resumable checkpoints "
        "(weights and optimizer states: several times the model's size). By default "
        "only the exported actor and critic stay, which is all the next phase needs.",
    )

    @model_validator(mode="before")
    @classmethod
    def _updates_with_the_algorithms_objective(cls, data: Any) -> Any:
        # the awr, grpo and gigpo algorithms are the update with the objective of their name, so that its own
        # settings (awr_temperature, clip_ratio, ...) validate as such; the default objective, official, stands for it
        algorithm = data.get("algorithm") if isinstance(data, dict) else None
        if algorithm in UPDATE_OBJECTIVES:
            update = data.get("update", {})
            if isinstance(update, dict) and update.get("objective", "official") == "official":
                data = {**data, "update": {**update, "objective": algorithm}}
        return data

    @model_validator(mode="after")
    def _train_tasks_of_a_family(self) -> RunSettings:
        family = family_of_set(self.train_tasks)
        if family is None or not family.is_train_set(self.train_tasks):
            raise ValueError(
                "the train tasks are a train split of a task family (embedded:train, "
                "miniwob[:ENV,...]:train): the test seeds stay held out"
            )
        if self.demo_tasks is not None and not (
            family.owns_set(self.demo_tasks) and family.is_train_set(self.demo_tasks)
        ):
            raise ValueError(f"the demonstration tasks are a train split of the train tasks' family ({family.name})")
        objective = self.update.objective
        if self.algorithm in UPDATE_OBJECTIVES and objective != self.algorithm:
            raise ValueError(f"the {self.algorithm} algorithm trains the {self.algorithm} objective, not {objective}")
        if objective in UPDATE_OBJECTIVES and self.algorithm != objective:
            raise ValueError(f"the {objective} objective is the {objective} algorithm: --algorithm {objective}")
        if self.algorithm in GROUP_FORMS and self.group_size < 2:
            raise ValueError(f"group_size: {self.algorithm} compares rollouts of the same task, needs 2 or more")
        if self.reward == "orm" and self.orm is None:
            raise ValueError("reward orm needs an --orm model")
        if self.generator != "evolver" and not family.llm_generation:
            raise ValueError(f"{family.name} tasks are generated by the evolver only")
        if self.keep_rollout_server and self.rollout_policy != "vllm":
            raise ValueError("keep_rollout_server: only a vllm rollout policy runs a server (rollout_policy vllm)")
        if self.rollout_policy == "vllm":
            for section in ("sft", "update"):
                if getattr(self, section).lora.rank > LORA_RANKS[-1]:
                    raise ValueError(f"{section}.lora.rank: vLLM serves adapters of rank {LORA_RANKS[-1]} at most")
        return self

    @property
    def family_set(self) -> str:
        """The train tasks' family as a task set name: train and test, what generated tasks must not repeat."""
        return self.train_tasks.removesuffix(":train")

    @property
    def task_family(self) -> TaskFamily:
        return family_of_set(self.train_tasks)


# The options of `webrl train` that set a field of a nested training: option name -> (section, field). Every scalar
# field of RunSettings is an option of its own name; of the trainings, the update's scalar algorithm fields keep
# theirs (a block such as critic_lora is set in a settings file).
NESTED_OPTIONS: dict[str, tuple[str, str]] = {
    "lr": ("update", "lr"),
    "sft_lr": ("sft", "lr"),
    "sft_page_loss": ("sft", "page_loss"),
    **{
        name: ("update", name)
        for name, field in UpdateSettings.model_fields.items()
        if name not in TrainSettings.model_fields
        and not isinstance(field.get_default(call_default_factory=True), BaseModel)
    },
}


def presets() -> dict[str, Path]:
    """The shipped presets: configs/NAME.yaml, each a whole settings file with a header on how to run it."""
    folder = resources.files("webrl.configs")
    return {Path(entry.name).stem: Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".yaml")}


def preset(name: str, _chain: tuple[str, ...] = ()) -> dict[str, Any]:
    """A preset's settings (partial: the rest are RunSettings' defaults). `extends: OTHER` in a preset takes OTHER's
    settings under its own, so that a variant names only what it changes."""
    known = presets()
    if name not in known:
        where = f"{known[_chain[-1]]}: extends {name}" if _chain else f"--preset {name}"
        raise UsageError(f"{where}: unknown; choose one of {', '.join(sorted(known))}")
    if name in _chain:
        raise UsageError(f"{known[_chain[-1]]}: extends {name}: a cycle ({' -> '.join((*_chain, name))})")
    settings = yaml.safe_load(known[name].read_text()) or {}
    parent = settings.pop("extends", None)
    return deep_merge(preset(parent, (*_chain, name)), settings) if parent else settings


def options_layer(options: dict[str, Any]) -> dict[str, Any]:
    """`webrl train`'s options as a settings layer (None: not given)."""
    layer: dict[str, Any] = {}
    for name, value in options.items():
        if value is None:
            continue
        if name in NESTED_OPTIONS:
            section, field = NESTED_OPTIONS[name]
            layer.setdefault(section, {})[field] = value
        else:
            layer[name] = value
    return layer


def resolve_run_settings(layers: Layers) -> RunSettings:
    """Named layers of settings (rising precedence: preset, configuration, --config file, options) merged and
    validated; a bad value names the layer it came from, and the option that sets it."""

    def option_of(loc: tuple[str, ...]) -> str | None:
        top = loc[0] if len(loc) == 1 and loc[0] in RunSettings.model_fields else None
        return next((o for o, path in NESTED_OPTIONS.items() if path == loc), top)

    return resolve_layers(RunSettings, layers, option_of)


def settings_yaml(settings: RunSettings) -> str:
    """The settings as a whole settings file (`--config` reads it back; `--print-config` prints it)."""
    return yaml.safe_dump(settings.model_dump(mode="json"), sort_keys=False)


def write_settings(out: Path, settings: RunSettings) -> None:
    write_atomically(Path(out) / SETTINGS_FILE, settings_yaml(settings))


def read_settings(out: Path) -> RunSettings:
    path = Path(out) / SETTINGS_FILE
    if not path.is_file():
        raise UsageError(
            f"{out}: not a webrl train run folder (no {SETTINGS_FILE}); start a run there without --resume"
        )
    # a run started before the strict mode was training's default goes on with the rules it started with (its
    # episodes so far were scored in them, and its stages resume with the same settings)
    return RunSettings.model_validate({"mode": "webarena", **yaml.safe_load(path.read_text())})
