"""The oracle: replays a task's scripted solution (`Task.cheat`).

Element ids are only known at run time, so a scripted step names its element by what a person
sees, in braces, and the oracle finds that element's id in the current observation:
`do(action="Click", element="{Sign In}")` picks the labelled element whose text (or title,
placeholder, value, data-text) is "Sign In"; `{placeholder=Email}` or `{title=...}` match one attribute.
"""

from __future__ import annotations

import html
import re

from webrl.policy.base import PolicyInput, Response, Sampling

TARGET = re.compile(r'element="\{([^}]*)\}"')
# An element with an id in the simplified HTML: its tag, attributes and direct text.
LABELLED = re.compile(r'<(\w+) id="(\d+)"([^>]*)>([^<]*)')
ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')


class OracleError(Exception):
    pass


class OraclePolicy:
    name = "oracle"

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        return [Response(self._one(x)) for x in inputs]

    def _one(self, x: PolicyInput) -> str:
        script = x.task.cheat or []
        step = len(x.history)
        if step >= len(script):
            return 'exit(message="")'
        try:
            return TARGET.sub(lambda m: f'element="{find_element(m.group(1), x.observation.text)}"', script[step])
        except OracleError as err:  # shows up in the trajectory as an unparseable (no-op) step
            return f"# oracle: {err}"


def find_element(target: str, observation_html: str) -> int:
    """The id of the first labelled element matching `target` ("text" or "attribute=value")."""
    attribute, _, wanted = target.rpartition("=")
    for match in LABELLED.finditer(observation_html):
        attrs = {k: html.unescape(v) for k, v in ATTRIBUTE.findall(match.group(3))}
        text = html.unescape(match.group(4)).strip()
        values = [attrs.get(attribute, "")] if attribute else [text, *attrs.values()]
        if any(v.strip() == wanted for v in values):
            return int(match.group(2))
    raise OracleError(f"no element matching {{{target}}} on this page")
