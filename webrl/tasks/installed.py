"""The installed task families (webrl.tasks.family), found through their `webrl.task_families` entry points at run
time. Apart from the interface so that the task model can ask them about a task's family data and eval types
(the interface's module imports the model)."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)

ENTRY_POINTS = "webrl.task_families"


@cache
def families() -> tuple[Any, ...]:
    """Every installed family (a webrl.tasks.family.TaskFamily), by entry point name."""
    found = sorted(entry_points(group=ENTRY_POINTS), key=lambda point: point.name)
    return tuple(point.load()() for point in found)


def evaluators() -> dict[str, Any]:
    """Every family's evaluators by eval type, the default family's first (the order messages list them in)."""
    ordered = sorted(families(), key=lambda family: not family.default)
    return {kind: evaluator for family in ordered for kind, evaluator in family.evaluators.items()}


def keeping_data() -> dict[str, Any]:
    """The families that keep data on their tasks, by name (the key of their data in `family_data`)."""
    return {family.name: family for family in families() if family.data_model is not None}


def migrate(data: Any) -> Any:
    """A task or an episode record as the previous release wrote it, each family's data at the top level under the
    family's name (None where the task is not the family's), with that data moved into `family_data`."""
    if not isinstance(data, dict) or not data.keys() & keeping_data().keys():
        return data
    data = dict(data)
    moved = {name: data.pop(name) for name in keeping_data() if name in data}
    data["family_data"] = {**{k: v for k, v in moved.items() if v is not None}, **data.get("family_data", {})}
    return data


def flatten(dumped: dict[str, Any]) -> dict[str, Any]:
    """A dumped task or episode record as files hold it, in every release: each family's data at the top level under
    the family's name (so a task file, an episodes file and the digest a --resume compares stay as they were)."""
    family_data = dumped.pop("family_data", None) or {}
    return {**dumped, **family_data}


def task_config(raw: dict[str, Any]) -> dict[str, Any]:
    """A raw task as a task config: a family's own format (TaskFamily.task_config) converted, else as it is."""
    return next((config for f in families() if (config := f.task_config(raw)) is not None), raw)


def record_data(family_data: dict[str, Any]) -> dict[str, Any]:
    """What of a task's family data its episode records keep (TaskFamily.record_data)."""
    kept = {name: keeping_data()[name].record_data(data) for name, data in family_data.items()}
    return {name: data for name, data in kept.items() if data is not None}


def validate_data(family_data: dict[str, Any]) -> dict[str, Any]:
    """`family_data` (family name -> its data), each family's validated by its own model."""
    if not family_data:
        return family_data
    validated = _data_model(families()).model_validate(family_data)
    return {name: getattr(validated, name) for name in family_data}


@cache
def _data_model(installed: tuple[Any, ...]) -> type[BaseModel]:
    """One model of every installed family's data, so that an error names the family (family_data.NAME.field)."""
    fields: dict[str, Any] = {f.name: (f.data_model | None, None) for f in installed if f.data_model is not None}
    return create_model("family_data", __config__=ConfigDict(extra="forbid"), **fields)


class CarriesFamilyData(BaseModel):
    """A task or an episode record: its task family's data in `family_data` (family name -> its data, each validated by
    its family's model), and in files at the top level under the family's name, as every release wrote it."""

    family_data: dict[str, Any] = Field(default_factory=dict)

    _family_data = field_validator("family_data")(validate_data)

    @model_validator(mode="before")
    @classmethod
    def _family_data_from_the_top(cls, data: Any) -> Any:
        return migrate(data)

    @model_serializer(mode="wrap")
    def _family_data_to_the_top(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return flatten(dump(self))
