"""The oracle: replays a task's scripted solution (`Task.cheat`).

Element ids are only known at run time, so a scripted step names its element by what a person
sees, in braces, and the oracle finds that element's id in the current observation:
`do(action="Click", element="{Sign In}")` picks the labelled element whose text (or title,
placeholder, value, data-text) is "Sign In"; `{placeholder=Email}` or `{title=...}` match one attribute;
`{@x,y}` picks the smallest labelled element whose box holds that point of the viewport (MiniWoB++ solutions
name elements without text, such as a checkbox, by where they are), and `{before(TARGET)}` the labelled element
printed just before the one TARGET names (an element without text, such as a product's photo, by its neighbour:
`webrl.tasks.script.before`). It answers at once: what a page does a moment after an action (a submenu's timer) is
waited for by the environment before it observes (webrl.env.browser_env).
"""

from __future__ import annotations

import html
import re

from webrl.env.observation import Observation
from webrl.policy.base import Policy, PolicyInput, Response, Sampling

TARGET = re.compile(r'element="\{([^}]*)\}"')
# An element with an id in the simplified HTML: its tag, attributes and direct text. Values and text are printed
# raw (quotes and brackets included, as VAB prints them): a value ends at the quote that the next attribute or the
# tag's end follows, and the text at the next tag (a space before it, but in the compact observation).
LABELLED = re.compile(r'<(\w+) id="(\d+)"((?: [\w-]+=".*?")*?)>(.*?)(?= ?<[/\w]|$)', re.S)
ATTRIBUTE = re.compile(r' ([\w-]+)="(.*?)"(?= [\w-]+="|$)', re.S)


class OracleError(Exception):
    pass


class OraclePolicy(Policy):
    name = "oracle"

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        return [Response(self._one(x)) for x in inputs]

    def _one(self, x: PolicyInput) -> str:
        script = x.task.cheat or []
        step = len(x.history)
        if step >= len(script):
            return 'exit(message="")'
        try:
            return TARGET.sub(lambda m: f'element="{find_element(m.group(1), x.observation)}"', script[step])
        except OracleError as err:  # shows up in the trajectory as an unparseable (no-op) step
            return f"# oracle: {err}"


POINT = re.compile(r"@(-?\d+),(-?\d+)")
BEFORE = re.compile(r"before\((.+)\)", re.S)


def find_element(target: str, observation: Observation) -> int:
    """The id of the first labelled element matching `target` ("text" or "attribute=value"), of the smallest
    one whose box holds the point "@x,y", or of the one printed just before the element "before(TARGET)" names."""
    if before := BEFORE.fullmatch(target):
        named = find_element(before.group(1), observation)
        printed = [int(m.group(2)) for m in LABELLED.finditer(observation.text)]
        at = printed.index(named) if named in printed else 0
        if at == 0:
            raise OracleError(f"no labelled element before {{{before.group(1)}}} on this page")
        return printed[at - 1]
    if point := POINT.fullmatch(target):
        x, y = map(int, point.groups())
        holding = [
            (w * h, i)
            for i, (left, top, w, h) in observation.boxes.items()
            if left <= x <= left + w and top <= y <= top + h
        ]
        if not holding:
            raise OracleError(f"no element at {x},{y} on this page")
        return min(holding)[1]
    attribute, _, wanted = target.rpartition("=")
    # A page that declares no charset shows its text as VAB's parser reads it: the UTF-8 bytes as Latin-1.
    seen_as = {wanted, wanted.encode("utf-8").decode("latin-1").strip()}
    for match in LABELLED.finditer(observation.text):
        attrs = dict(ATTRIBUTE.findall(match.group(3)))
        values = [attrs.get(attribute, "")] if attribute else [match.group(4), *attrs.values()]
        if attribute == "data-text":  # the compact observation prints a data-text equal to the text as the text only
            values.append(match.group(4))
        # printed raw, or escaped (--escape-text)
        if any(v.strip() in seen_as or html.unescape(v).strip() in seen_as for v in values):
            return int(match.group(2))
    raise OracleError(f"no element matching {{{target}}} on this page")
