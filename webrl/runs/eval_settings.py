"""The settings of a run of episodes (EvalSettings): `webrl eval`'s options, and what the training loop's
rollouts, evaluations and demonstrations run with. The field descriptions are `webrl eval --help` and the
configuration page; fields marked `option=None` are filled in by the run, not by its user. The task families add
the settings their episodes take (TaskFamily.options) after webrl's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from webrl.evaluators.result import all_modes
from webrl.layered_settings import field_extra, option_name
from webrl.policy.factory import POLICY_FORMS
from webrl.tasks.family import family_modes, family_options

# --mode's help: webrl's own modes, then each the task families add
_MODES_HELP = [
    "webarena (original)",
    "vab (WebRL's numbers)",
    "browsergym",
    "strict (WebArena's rules and a guard against dumped answers and URLs: webrl train's reward)",
    *(f"{name} ({mode.description})" for name, mode in family_modes().items()),
]


def _run_filled(description: str) -> dict[str, Any]:
    """A field the run fills in (recorded in summary.json), not an option or a settings file's."""
    return {"description": description, "json_schema_extra": {"option": None}}


class _Settings(BaseModel):
    """How a policy is run over a task set, and how its episodes are scored; written into summary.json."""

    tasks: str = Field(
        description="A task set (webarena-lite, webarena, webarena-verified[:hard], embedded[:train|:test], "
        "miniwob[:ENV,...][:train|:test]) or a task file/folder."
    )
    policy: str = Field("oracle", description="Who acts: " + "; ".join(f.split("  ")[0] for f in POLICY_FORMS) + ".")
    parallel: int = Field(
        1,
        ge=1,
        description="Episodes at once; slot k uses site instance k. With --executor ray: per environment worker.",
    )
    repeats: int = Field(1, ge=1, description="Runs of every task (mean ± std over repeats).")
    max_steps: int = Field(30, ge=1, description="Step limit per episode (WebRL: 30).")
    mode: Literal[all_modes()] = Field(  # webrl's modes, then the installed task families'
        "webarena",
        description=f"Evaluator semantics: {', '.join(_MODES_HELP[:-1])}, or {_MODES_HELP[-1]}.",
    )
    judge: str = Field(
        "none",
        description="LLM judge for fuzzy and N/A answers: none, or openai:MODEL@URL. "
        "Without one those tasks are reported unjudged.",
    )
    observation: Literal["webrl", "compact", "axtree"] = Field(
        "webrl",
        description="webrl (VAB's simplified HTML), compact (the same without positions and repeated text: for small "
        "models, not VAB's) or axtree.",
    )
    action_space: Literal["webrl", "webarena"] = Field(
        "webrl", description="Action syntax: webrl or webarena.", json_schema_extra={"option": "actions"}
    )
    escape_text: bool = Field(
        False, description='Print ", < and > in the simplified HTML as &quot; &lt; &gt; (VAB prints them raw).'
    )
    click_at: Literal["box", "line"] = Field(
        "box",
        description="Where element actions land: box (VAB: Click and Select at the centre of the element's bounding "
        "box, Type, Search and Hover at its data-bbox's) or line (webrl's: every action at the centre of the "
        "element's first line box, better for wrapped links).",
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature (WebRL evaluates at 0).")
    max_tokens: int = Field(2048, ge=1, description="Token limit of each answer (WebRL: 2048).")
    context: int | None = Field(
        None,
        ge=2,
        description="Tokens of prompt plus answer an hf: model may use (a longer prompt loses the end of its page) "
        "[default: the model's context]. Give a trained actor its training's --max-tokens to show it prompts cut "
        "as in training.",
    )
    seed: int | None = Field(
        None,
        description="With --temperature above 0: each answer samples with a seed from (this, task, repeat, step), so "
        "a run gives the same answers again, on any executor and in any order [default: unseeded].",
    )
    limit: int | None = Field(
        None,
        ge=1,
        description="Only the first N tasks of the set (a MiniWoB++ set is ordered seed by seed across its "
        "environments, so this keeps an even spread).",
    )
    screenshots: bool = Field(True, description="Keep a screenshot of every step beside the episode's record.")
    record_network: bool | None = Field(
        None,
        description="Keep each episode's network trace as HAR beside its record (network/) [default: in --mode "
        "verified only].",
    )
    # required of a run; `webrl eval` names one by the time when not given
    out: Path = Field(
        description="Run folder [default: runs/eval-<time>].", json_schema_extra={"in_file": False, "shown": "–"}
    )
    resume: bool = Field(
        False,
        description="Continue the run in --out with the settings and tasks it started with (others are refused), "
        "skipping finished episodes and re-running faulted and missing ones.",
        json_schema_extra={"in_file": False},
    )
    backend: str = Field("embedded", **_run_filled("The sites' backend, from the configuration (embedded or docker)."))
    task_suite: str | None = Field(None, **_run_filled("The embedded suite's version, when the tasks come from it."))
    site_resets: str | None = Field(
        None, **_run_filled("When the backend resets a site before an episode (the run asks it).")
    )

    @property
    def records_network(self) -> bool:
        """--record-network, else whether the mode keeps the trace (a task family's mode that judges it)."""
        if self.record_network is not None:
            return self.record_network
        return self.mode in family_modes() and family_modes()[self.mode].records_network


EvalSettings = create_model("EvalSettings", __base__=_Settings, __doc__=_Settings.__doc__, **family_options())


# option name (as a Python identifier: --max-steps is max_steps) -> field
EVAL_OPTIONS: dict[str, str] = {
    option_name(name, field): name
    for name, field in EvalSettings.model_fields.items()
    if option_name(name, field) is not None
}
# the fields a settings file holds (`webrl eval --config`, `--print-config`): the options but the run's folder
FILE_FIELDS = tuple(
    name for name in EVAL_OPTIONS.values() if field_extra(EvalSettings.model_fields[name]).get("in_file", True)
)


def option_of(loc: tuple[str, ...]) -> str | None:
    """The option that sets a field (for errors), None where none does."""
    return next((option for option, name in EVAL_OPTIONS.items() if loc[:1] == (name,)), None)
