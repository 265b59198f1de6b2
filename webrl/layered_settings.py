"""Settings from layers: a preset, the configuration, a settings file, the options, each a partial mapping that
overrides the ones before it section by section; the merge is validated once by the settings model, and a bad
value names the last layer that set it and the option that sets it.

`webrl train` (RunSettings) and `webrl eval` (EvalSettings) resolve their settings this way.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from webrl.errors import UsageError, field_problem

Model = TypeVar("Model", bound=BaseModel)
Layers = list[tuple[str, dict[str, Any]]]  # (name for errors, settings), by rising precedence


def field_extra(field: FieldInfo) -> dict[str, Any]:
    """A settings field's own marks (its json_schema_extra): "metavar"; "option", its option's name where it is not
    the field's (None: no option, the run fills it in); "in_file": False for an option no settings file holds;
    "shown", the default the docs show where the command fills one in."""
    return field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}


def option_name(name: str, field: FieldInfo) -> str | None:
    """The option that sets field `name`, as a Python identifier (None: none does)."""
    return field_extra(field).get("option", name)


def read_settings_file(path: Path) -> dict[str, Any]:
    """A YAML (or, by its suffix, TOML) file of settings as a mapping; unreadable or malformed is a usage error."""
    try:
        text = path.read_text()
    except OSError as err:
        raise UsageError(f"config file {path}: cannot read ({err.strerror})") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as err:
        mark = getattr(err, "problem_mark", None)  # YAML's: where it went wrong (TOML's message says so itself)
        where = f"{err.problem} at line {mark.line + 1} column {mark.column + 1}" if mark else str(err).splitlines()[0]
        raise UsageError(
            f"config file {path}: not valid {'TOML' if path.suffix == '.toml' else 'YAML'}: {where}"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"config file {path}: the top level must be a mapping of settings")
    return data


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`, section by section."""
    merged = dict(base)
    for key, value in over.items():
        nested = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = deep_merge(merged[key], value) if nested else value
    return merged


def resolve_layers(model: type[Model], layers: Layers, option_of: Callable[[tuple[str, ...]], str | None]) -> Model:
    """The layers merged and validated as `model`; a bad value is a usage error naming the last layer that set it,
    the field, and its option (`option_of(field path)`, None where no option sets it)."""
    merged: dict[str, Any] = {}
    for _, layer in layers:
        merged = deep_merge(merged, layer)
    try:
        return model.model_validate(merged)
    except ValidationError as err:
        problem = field_problem(err)
        if not problem.loc:  # a rule over several fields: name the last layer that set anything
            source = next((name for name, layer in reversed(layers) if layer), "settings")
            raise UsageError(f"{source}: {problem.message}") from None
        source = next((name for name, layer in reversed(layers) if _has(layer, problem.loc)), "settings")
        option = option_of(problem.loc)
        flag = f" (--{option.replace('_', '-')})" if option else ""
        raise UsageError(f"{source}: field '{problem.field}'{flag}: {problem.message}") from None


def _has(layer: dict[str, Any], loc: tuple[str, ...]) -> bool:
    node: Any = layer
    for key in loc:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True
