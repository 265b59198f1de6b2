"""Commands whose options are generated from settings models: a field's description is its option's help, its
metavar (json_schema_extra) the metavar, and its validators the checks, so that a new setting is one field."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic.fields import FieldInfo

from webrl.layered_settings import Layers, field_extra, read_settings_file


def field_option(field: FieldInfo, help_text: str | None = None) -> Any:
    """A typer option for a settings field: its description is the help, its metavar (if any) the metavar."""
    return typer.Option(help=help_text or field.description, metavar=field_extra(field).get("metavar"))


def extend_command(
    command: Callable,
    extra: list[inspect.Parameter],
    call: Callable[[dict[str, Any]], Any],
    drop: str | None = None,
    extra_first: bool = False,
) -> Callable:
    """`command` with the keyword options `extra` added to its signature (after its own, or before them), and
    `drop` removed, so that typer shows them; `call(kwargs)` gets every option's value and calls `command`."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != drop]
    # keyword-only throughout: a signature's order must otherwise put parameters with defaults last
    params = [*extra, *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own)] if extra_first else own + extra

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        return call(kwargs)

    run.__signature__ = inspect.Signature(params)
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


def unset_options(fields: dict[str, tuple[FieldInfo, Any, str]]) -> list[inspect.Parameter]:
    """One keyword option per (field, default shown in the help, help prefix), defaulting to None, "not given", so
    that the layers below the options (a preset, the configuration, a settings file) apply."""
    params = []
    for name, (field, default, prefix) in fields.items():
        shown = f" [default: {default}]" if default is not None else ""
        annotation = Annotated[field.annotation | None, field_option(field, f"{prefix}{field.description}{shown}")]
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation))
    return params


def config_layers(section: str, defaults: dict[str, Any], config_file: Path | None) -> Layers:
    """The settings layers below a command's options: the configuration's `section` (defaults for every run), then
    the command's --config file (its `section:` section, or the whole file)."""
    layers = [(f"the configuration's {section} section", defaults)] if defaults else []
    if config_file is not None:
        data = read_settings_file(config_file)
        layers.append((f"--config {config_file}", data.get(section, data)))
    return layers
