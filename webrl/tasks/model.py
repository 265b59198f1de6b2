"""The WebArena task configuration as pydantic models.

Every field of the original JSON is modelled; fields we do not know are kept (``extra="allow"``) so that a task
written back out loses nothing. Known data quirks (of the two real task files)
are tolerated and kept as the file has them, and a human-readable note is appended to ``Task.warnings`` so that
nothing is fixed silently. An eval block the originals reject *when they evaluate it* loads too: the evaluators
reject it at the same point, for that task only (webrl.evaluators.router; the file is never refused for it).

Quirks recorded (one warning each):
- ``reference_answers.must_include`` (or ``required_contents.must_include``) given as a bare string (WebArena-Lite
  task 81), or ``fuzzy_match`` as a string other than ``"N/A"``: the webarena and vab evaluators fail their assert
  (an error for the task); browsergym reads a one-item list.
- ``fuzzy_match: ["N/A"]`` (a *list*, WebArena-Lite tasks 51, 91): kept as a list and flagged, because only the
  *string* ``"N/A"`` triggers the unachievable-task rule; the list is graded by the LLM like any reference.
- ``fuzzy_match: "N/A"`` without ``string_note`` (an error in webarena/vab once the unachievable-reason judge is
  reached) or with an empty one (the judge gets an empty reference).
- ``eval_types`` empty (scores 1.0: an empty product) or naming an unknown type, ``string_match`` with null
  ``reference_answers``, ``url_match`` with null ``reference_url`` or with a ``url_note`` that is null or unknown,
  a ``required_contents`` without a rule: errors for the task when evaluated (see each warning for the modes).
- ``string_match`` ``must_include`` items containing ``" |OR| "`` (WebArena 386 = Lite 94): the webarena and
  browsergym modes do not split them (effectively unpassable), vab does.
- Answers that embed the GitLab clone host (``ssh://git@…:2222``; WebArena 293–297, Lite 71).
- ``url_match`` without ``url_note`` (Lite 45): vab applies EXACT there, the other modes GOLD in PRED.
- ``required_contents`` keys that only VAB/BrowserGym know (``fuzzy_match``, ``must_exclude``,
  ``required_values``) and ``lambda:`` locators: the webarena mode cannot score them (error).
- A top-level ``string_note`` (WebArena task 723) next to ``eval.string_note``: kept, but the evaluators read
  ``eval.string_note``.
- Evaluation data present without its ``eval_type`` (ignored), or an ``eval_type`` without its data.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_serializer,
    model_validator,
)

from webrl.sitelist import SITE_LIST
from webrl.tasks import installed

URL_NOTES = ("GOLD in PRED", "EXACT")  # EXACT: vab only
RULES = ("exact_match", "must_include", "must_exclude", "required_values", "fuzzy_match")
AND_SEPARATOR = " |AND| "
OR_SEPARATOR = " |OR| "
# Every site a task may name, each with its URL placeholder (__SHOPPING_ADMIN__ ...)
SITES = tuple(site.name for site in SITE_LIST)
# a whole placeholder token: __SHOPPING__ never matches the start of __SHOPPING_ADMIN__
PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*[A-Z])__")
GITLAB_CLONE_HOST = re.compile(r"ssh://git@[^/\s]+:2222/")


def known_placeholders(text: str | None) -> str | None:
    """`text` when every placeholder in it names a site. A misspelt one (__SHOPPPING__) is never substituted:
    the task would fail in the browser (an environment error the score leaves out) or score 0 unexplained."""
    for match in PLACEHOLDER.finditer(text or ""):
        if match.group(1).lower() not in SITES:
            raise ValueError(
                f"unknown placeholder {match.group(0)} (the sites': {', '.join(f'__{s.upper()}__' for s in SITES)})"
            )
    return text


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ReferenceAnswers(_Open):
    """``eval.reference_answers``. The evaluators iterate the keys **in the order of the file** (the unachievable
    rule replaces the running score, so order matters): use ``items()``, not the attributes."""

    exact_match: str | None = None
    must_include: list[str] | str | None = None  # a bare string: as the file has it (the evaluators decide)
    fuzzy_match: str | list[str] | None = None  # the string "N/A" and the list ["N/A"] mean different things
    # VAB-WebArena-Lite additions
    must_exclude: list[str] | None = None
    one_of: list[str] | None = None
    required_values: list[str] | None = None

    _order: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler):
        obj = handler(data)
        if isinstance(data, dict):
            obj._order = [k for k in data if data[k] is not None]
        elif isinstance(data, ReferenceAnswers):
            obj._order = list(data._order)
        return obj

    def items(self) -> list[tuple[str, Any]]:
        """(approach, value) pairs in file order, including unknown approaches (which the evaluators ignore)."""
        values = self.model_dump()
        order = [k for k in self._order if values.get(k) is not None]
        order += [k for k, v in values.items() if v is not None and k not in order]
        return [(k, values[k]) for k in order]

    @model_serializer(mode="wrap")
    def _serialize(self, handler):
        data = handler(self)
        order = [k for k in self._order if k in data] + [k for k in data if k not in self._order]
        return {k: data[k] for k in order if data[k] is not None}


class RequiredContents(_Open):
    """``program_html[].required_contents``: one rule is used, in this precedence (the originals' if/elif chain):
    exact_match, must_include, must_exclude, required_values, fuzzy_match. None of them: ``rule`` is None."""

    exact_match: str | None = None
    must_include: list[str] | str | None = None
    # VAB / BrowserGym additions
    fuzzy_match: list[str] | None = None
    must_exclude: list[str] | None = None
    required_values: list[str] | None = None

    @property
    def rule(self) -> str | None:
        return next((key for key in RULES if getattr(self, key) is not None), None)

    @model_serializer(mode="wrap")
    def _serialize(self, handler):
        return {k: v for k, v in handler(self).items() if v is not None}


class ProgramHtml(_Open):
    url: str
    locator: str
    required_contents: RequiredContents
    prep_actions: list[str] | None = None

    _url_placeholders = field_validator("url")(known_placeholders)

    @model_serializer(mode="wrap")
    def _serialize(self, handler):
        data = handler(self)
        if data.get("prep_actions") is None:
            data.pop("prep_actions", None)
        return data


class EvalSpec(_Open):
    eval_types: list[str]
    reference_answers: ReferenceAnswers | None = None
    reference_url: str | None = None
    url_note: str | None = None
    string_note: str | None = None
    program_html: list[ProgramHtml] = Field(default_factory=list)
    reference_answer_raw_annotation: str | None = None
    annotation_note: str | None = None

    _url_placeholders = field_validator("reference_url", "url_note")(known_placeholders)

    @field_validator("program_html", mode="before")
    @classmethod
    def _null_is_empty(cls, value):
        return [] if value is None else value

    @property
    def reference_urls(self) -> list[str]:
        """The ``" |OR| "`` alternatives of ``reference_url`` (empty when there is none)."""
        return self.reference_url.split(OR_SEPARATOR) if self.reference_url else []


class Task(_Open, installed.CarriesFamilyData):
    task_id: int | str
    sites: list[str] = Field(default_factory=list)
    start_url: str
    require_login: bool = True
    storage_state: str | None = None
    geolocation: Any = None
    intent_template: str = ""
    instantiation_dict: dict[str, Any] = Field(default_factory=dict)
    intent: str
    intent_template_id: int | None = None
    require_reset: bool = False
    eval: EvalSpec
    old_task_id: int | None = None
    # Our extras
    cheat: list[str] | None = None  # a scripted solution: action strings in the webrl action syntax
    split: str | None = None
    tier: int | str | None = None
    warnings: list[str] = Field(default_factory=list)  # data quirks found while loading (see module docstring)

    def to_config(self) -> dict[str, Any]:
        """The task as a JSON-ready dict in the original shape: only the fields the source had (plus any we set),
        without ``warnings``."""
        return self.model_dump(mode="json", exclude_unset=True, exclude={"warnings"})

    @property
    def start_urls(self) -> list[str]:
        """One URL per tab (``" |AND| "`` separated); the first tab is the active page."""
        return self.start_url.split(AND_SEPARATOR)

    @property
    def reference_urls(self) -> list[str]:
        return self.eval.reference_urls

    @property
    def writes(self) -> bool:
        """Whether the task changes its sites: it is checked on their state (program_html), or asks for a reset.
        Tasks answered by a string or a URL only read."""
        return self.require_reset or "program_html" in self.eval.eval_types

    @field_validator("sites")
    @classmethod
    def _known_sites(cls, sites: list[str]) -> list[str]:
        unknown = [s for s in sites if s not in SITES]
        if unknown:
            raise ValueError(f"unknown site {unknown[0]!r} (the sites: {', '.join(SITES)})")
        return sites

    @field_validator("start_url")
    @classmethod
    def _start_urls_resolve(cls, start_url: str) -> str:
        """Each tab's URL is a site placeholder or http(s) URL: an unknown placeholder would only fail in the
        browser, as an environment error the score does not count."""
        known_placeholders(start_url)
        for url in start_url.split(AND_SEPARATOR):
            if not PLACEHOLDER.match(url) and not url.startswith(("http://", "https://")):
                raise ValueError(f"{url!r} is neither a site placeholder (__SHOPPING__/...) nor an http(s) URL")
        return start_url

    @model_validator(mode="after")
    def _family_data_goes_with_its_eval_types(self):
        for name, family in installed.keeping_data().items():
            kinds = list(family.evaluators)
            if any(kind in self.eval.eval_types for kind in kinds) != (name in self.family_data):
                raise ValueError(
                    f"eval_types has {' or '.join(kinds)} without the {name} family's data, or the reverse"
                )
        return self

    @model_validator(mode="before")
    @classmethod
    def _quirks(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
            return data
        data = copy.deepcopy(data)
        notes: list[str] = list(data.get("warnings") or [])

        def warn(text: str) -> None:
            if text not in notes:
                notes.append(text)

        spec = data["eval"]
        types = spec.get("eval_types") if isinstance(spec.get("eval_types"), list) else []
        error = "every mode records an evaluation error for this task"
        strict = "webarena and vab record an evaluation error for this task (the originals assert a list)"
        if not types:
            warn("eval_types is empty: every mode scores the task 1.0 (an empty product, as in the originals)")
        for kind in types:
            if kind not in installed.evaluators():
                warn(f"eval_types has {kind!r}, which no evaluator here knows: {error}")
        answers = spec.get("reference_answers")
        if "string_match" in types and answers is None:
            warn(f"eval_types has string_match but reference_answers is null: {error}")
        if isinstance(answers, dict):
            include = answers.get("must_include")
            if isinstance(include, str):
                warn(
                    f"reference_answers.must_include is a bare string ({include!r}), not a list: {strict}; "
                    f"browsergym reads it as [{include!r}]"
                )
            includes = [include] if isinstance(include, str) else include if isinstance(include, list) else []
            if any(isinstance(v, str) and OR_SEPARATOR in v for v in includes):
                warn(
                    "string_match must_include has ' |OR| ' alternatives: vab splits them; webarena and "
                    "browsergym match the literal text (lower-cased) and so practically never pass"
                )
            fuzzy = answers.get("fuzzy_match")
            if fuzzy == ["N/A"]:
                warn(
                    "fuzzy_match is the list ['N/A'], not the string 'N/A': the unachievable-task rule does not "
                    "apply; the LLM judge grades the answer against the reference 'N/A'"
                )
            elif isinstance(fuzzy, str) and fuzzy != "N/A":
                warn(
                    f"fuzzy_match is the string {fuzzy!r}, not a list (only 'N/A' may be a string): {strict}; "
                    f"browsergym reads it as [{fuzzy!r}]"
                )
            if fuzzy == "N/A" and spec.get("string_note") is None:
                warn(
                    "fuzzy_match 'N/A' without eval.string_note: webarena and vab record an evaluation error "
                    "when the unachievable-reason judge is reached (an answer other than 'N/A'); browsergym "
                    "gives that judge an empty reason"
                )
            elif fuzzy == "N/A" and not spec.get("string_note"):
                warn(
                    "fuzzy_match 'N/A' with an empty eval.string_note: the unachievable-reason judge gets no "
                    "reference reason"
                )
            if any(isinstance(v, str) and GITLAB_CLONE_HOST.search(v) for v in [answers.get("exact_match"), *includes]):
                warn(
                    "the reference answer embeds the GitLab clone host (ssh://git@HOST:2222/...): it only "
                    "matches where GitLab reports that same host"
                )
            if "string_match" not in types:
                warn("reference_answers is set but eval_types has no string_match: it is ignored")
        if "url_match" in types:
            note = spec.get("url_note")
            if "url_note" not in spec:
                warn(
                    "url_match without url_note: the webarena and browsergym modes apply GOLD in PRED, "
                    "vab applies EXACT"
                )
            elif note not in URL_NOTES:
                warn(
                    f"url_note is {note!r}, neither 'GOLD in PRED' nor 'EXACT' (a null note is not a missing one): "
                    f"{error}"
                )
            elif note == "EXACT":
                warn(
                    "url_note 'EXACT': only vab knows it; webarena and browsergym record an evaluation error for "
                    "this task"
                )
            if spec.get("reference_url") is None:
                warn(f"eval_types has url_match but reference_url is null: {error}")
            elif spec.get("reference_url") == "":
                warn("url_match with an empty reference_url: webarena/browsergym pass any URL, vab none")
        programs = spec.get("program_html")
        if "program_html" in types and not programs:
            warn("eval_types has program_html but program_html is empty: it scores 1")
        if "program_html" not in types and programs:
            warn("program_html targets are set but eval_types has no program_html: they are ignored")
        for i, target in enumerate(programs or []):
            if not isinstance(target, dict):
                continue
            contents = target.get("required_contents")
            if isinstance(contents, dict):
                if isinstance(contents.get("must_include"), str):
                    warn(
                        f"program_html[{i}].required_contents.must_include is a bare string, not a list: {strict}; "
                        "browsergym reads a one-item list"
                    )
                if not any(contents.get(rule) is not None for rule in RULES):
                    warn(
                        f"program_html[{i}].required_contents has none of {', '.join(RULES)}: {error} (when the "
                        "evaluator reaches it)"
                    )
                extra = [k for k in ("fuzzy_match", "must_exclude", "required_values") if k in contents]
                if extra:
                    warn(
                        f"program_html[{i}].required_contents uses {', '.join(extra)} (VAB addition): "
                        "the webarena mode cannot score it"
                    )
            locator = target.get("locator")
            if isinstance(locator, str) and locator.startswith("lambda:"):
                warn(
                    f"program_html[{i}].locator is a 'lambda:' locator: only vab/browsergym accept it, and "
                    "they strip the prefix as a set of characters (lstrip)"
                )
        if "string_note" in data and data["string_note"] != spec.get("string_note"):
            warn("a top-level string_note differs from eval.string_note; the evaluators read eval.string_note")
        data["warnings"] = notes
        return data
