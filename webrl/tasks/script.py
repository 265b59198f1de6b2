"""The WebRL action syntax of the scripted solutions (`Instance.cheat`): one string a step,
`do(action="Click", element="{Sign In}")`, `do(action="Type", element="{placeholder=Email}", argument="...")`,
..., ending with `exit(message="...")`.

The element is named in braces by what a person sees; the oracle (`webrl.policy.oracle`) swaps the braces for
the element's id before the step is parsed, so a name goes in as it is (anything but "}"). Arguments and
messages are read back by `webrl.env.actions.parse_action` as Python string literals: they are written as
JSON strings (double quotes; JSON's escapes are Python's), non-ASCII text kept as it is. The parser starts at
the last "exit(" (else the last "do(") of a step, so neither may appear inside a step's own text.
"""

from __future__ import annotations

import json


def lit(text: str) -> str:
    """`text` as a double-quoted Python string literal."""
    text = str(text)
    if "exit(" in text or "do(" in text:
        raise ValueError(f"{text!r} would cut the step short in parse_action")
    return json.dumps(text, ensure_ascii=False)


def do(action: str, target: str | None = None, argument: str | None = None) -> str:
    """`do(action=..., element="{target}", argument=...)`, the element and argument where given."""
    parts = [f"action={lit(action)}"]
    if target is not None:
        if "}" in target:
            raise ValueError(f"cannot name an element by {target!r}")
        parts.append(f'element="{{{target}}}"')
    if argument is not None:
        parts.append(f"argument={lit(argument)}")
    return f"do({', '.join(parts)})"


def before(target: str) -> str:
    """A target naming the labelled element printed just before the one `target` names: an element that shows no
    text of its own (a product's photo is an <img> whose alt text the observation leaves out) by its neighbour."""
    return f"before({target})"


def click(target: str) -> str:
    return do("Click", target)


def hover(target: str) -> str:
    return do("Hover", target)


def type_(target: str, text: str) -> str:
    """Clear the field, then type `text` (no Enter)."""
    return do("Type", target, text)


def search(target: str, text: str) -> str:
    """Type `text` into the field, then press Enter."""
    return do("Search", target, text)


def select(target: str, option: str) -> str:
    """Pick the first option of the <select> whose text contains `option` (case-insensitive)."""
    return do("Select Dropdown Option", target, option)


def scroll_down() -> str:
    return do("Scroll Down")


def scroll_up() -> str:
    return do("Scroll Up")


def go_back() -> str:
    return do("Go Backward")


def done(message: str = "", note: str = "") -> str:
    """`exit(message=...)`, after a `# note` line (the reasoning a demonstration shows) where given."""
    step = f"exit(message={lit(message)})"
    return f"# {note}\n{step}" if note else step
