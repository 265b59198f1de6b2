"""Parsing model output into actions, and executing actions in the page.

Two action spaces:

`webrl` (VAB/WebRL): optional `#` comment lines, then
one Python-style call, e.g. `do(action="Click", element="2")` or `exit(message="42")`. The parser looks
for `exit(`, `do(` and `go_backward(` in that order; for the first one present it keeps the text from its
last occurrence on (otherwise it drops leading `#` lines) and parses that with `ast.parse(mode="eval")`.
Keyword arguments only; the action name is case-insensitive. Actions the VAB parser does not handle
(Right Click, Switch Tab, Wait, bare go_backward()/go_forward(), element=find_element_by_instruction(...))
become a `none` action carrying the reason, as does anything that does not parse. Parsing never raises.

`webarena` (WebArena id-based syntax): `click [id]`, `type [id] [text] [0|1]` (a missing flag means
1: Enter is pressed, written as a trailing "\\n" in the argument), `hover [id]`, `press [keys]`,
`scroll [down|up]`, `new_tab`, `tab_focus [i]`, `close_tab`, `goto [url]`, `go_back`, `go_forward`,
`stop [answer]`. When the response holds "In summary, the next action I will perform is", the action is
the first ```fenced``` block after it; otherwise the first fenced block, otherwise the whole text.

`execute` acts through the mouse at the centre of a box of the element. `click_at="box"` does what VAB does with
the WebRL observation: Click and Select Dropdown Option land at the centre of the element's bounding box, measured
when the action runs (a link wrapped over two lines: between them); Type, Search and Hover at the centre of its
data-bbox from the observation (its first client rect). `click_at="line"` (webrl's own) lands every action at the
centre of the element's first line box of at least 1 px², as observed. The accessibility tree's boxes are its
nodes' layout boxes, as WebArena's.

`may_visit` (the sandbox, webrl.env.browser_env): an action that would load a URL the agent may not visit is refused
before any input, untouched: `goto`, and a click, type, search or select whose point lies on a link (or a submit
button) to one, and a key press on a focused one. The browser would run a `javascript:` URL's script in the
site's page and make a `data:` page itself, without a request a proxy could stop.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import re
from dataclasses import dataclass

from playwright.async_api import Error as PlaywrightError

WEBRL_KINDS = (
    "click",
    "type",
    "search",
    "hover",
    "select",
    "scroll_up",
    "scroll_down",
    "press_enter",
    "go_forward",
    "go_backward",
    "exit",
)
WEBARENA_KINDS = (
    "click",
    "type",
    "hover",
    "press",
    "scroll_up",
    "scroll_down",
    "new_tab",
    "tab_focus",
    "close_tab",
    "goto",
    "go_backward",
    "go_forward",
    "stop",
)
# do(action=...) names, lower-cased, to kinds.
WEBRL_ACTIONS = {
    "click": "click",
    "type": "type",
    "search": "search",
    "hover": "hover",
    "select dropdown option": "select",
    "scroll up": "scroll_up",
    "scroll down": "scroll_down",
    "press enter": "press_enter",
    "go forward": "go_forward",
    "go backward": "go_backward",
}
UNSUPPORTED_WEBRL_ACTIONS = ("right click", "switch tab", "wait")
NEEDS_ELEMENT = {"click", "type", "search", "hover", "select"}
NEEDS_ARGUMENT = {"type", "search", "select"}
ANSWER_PHRASE = "In summary, the next action I will perform is"

NAVIGATION_TIMEOUT_MS = 10_000  # the longest wait for a navigation an action started


@dataclass(frozen=True)
class Action:
    kind: str  # one of WEBRL_KINDS / WEBARENA_KINDS, or "none" when the text did not parse
    element: int | None = None
    argument: str | None = None
    text: str = ""  # the exact substring the action was parsed from (for identical-action detection)
    error: str | None = None  # why parsing failed (kind == "none")
    space: str = "webrl"


class ActionError(Exception):
    """A parsed action that cannot be carried out on this page (a failed step, not a crash). `untouched`: it failed
    before any input reached the page (an unknown element id, no such option or tab), so the page is as it was."""

    def __init__(self, message: str, untouched: bool = False):
        super().__init__(message)
        self.untouched = untouched


def parse_action(text: str, space: str = "webrl") -> Action:
    """Parse one raw model response. Never raises: anything unusable is Action("none", error=...)."""
    try:
        if space == "webrl":
            return _parse_webrl(text if isinstance(text, str) else str(text))
        if space == "webarena":
            return _parse_webarena(text if isinstance(text, str) else str(text))
        return _none(str(text), f"unknown action space {space!r}", space)
    except Exception as err:  # noqa: BLE001 - the parser must never take the episode down
        return _none(str(text), f"unparseable: {type(err).__name__}: {err}", space)


def _none(text: str, error: str, space: str = "webrl") -> Action:
    return Action("none", text=text, error=error, space=space)


# -- webrl ------------------------------------------------------------------------------------------


def _parse_webrl(text: str) -> Action:
    for key in ("exit(", "do(", "go_backward("):
        if key in text:
            code = text[text.rindex(key) :]
            break
    else:
        lines = text.splitlines()
        while lines and lines[0].lstrip().startswith("#"):
            lines.pop(0)
        code = "\n".join(lines)
    code = code.strip()
    if not code:
        return _none(code, "no action: expected do(...) or exit(...)")
    try:
        tree = ast.parse(code, mode="eval")
    except (SyntaxError, ValueError) as err:
        return _none(code, f"not a single Python call: {getattr(err, 'msg', err)}")
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return _none(code, "expected a call such as do(action=...) or exit(message=...)")
    name = call.func.id
    if call.args:
        return _none(code, f"{name}() takes keyword arguments only")
    kwargs: dict[str, object] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            return _none(code, f"{name}() does not accept **kwargs")
        if (
            isinstance(keyword.value, ast.Call)
            and isinstance(keyword.value.func, ast.Name)
            and keyword.value.func.id == "find_element_by_instruction"
        ):
            return _none(code, "element=find_element_by_instruction(...) is not supported; give an element id")
        if not isinstance(keyword.value, ast.Constant):
            return _none(code, f"argument {keyword.arg}= must be a literal string or number")
        kwargs[keyword.arg] = keyword.value.value

    if name == "exit":
        message = kwargs.get("message")
        return Action("exit", argument="" if message is None else str(message), text=code)
    if name in ("go_backward", "go_forward"):
        direction = "Backward" if name == "go_backward" else "Forward"
        return _none(code, f'bare {name}() is not supported; use do(action="Go {direction}")')
    if name != "do":
        return _none(code, f"unknown function {name}(); expected do(...) or exit(...)")

    if "action" not in kwargs:
        return _none(code, "do() needs action=...")
    action_name = str(kwargs["action"]).strip().lower()
    if action_name in UNSUPPORTED_WEBRL_ACTIONS:
        return _none(code, f'action "{kwargs["action"]}" is not supported')
    kind = WEBRL_ACTIONS.get(action_name)
    if kind is None:
        return _none(code, f'unknown action "{kwargs["action"]}"')

    element = None
    if kind in NEEDS_ELEMENT:
        if "element" not in kwargs:
            return _none(code, f'"{kwargs["action"]}" needs element=...')
        element = _element_id(kwargs["element"])
        if element is None:
            return _none(code, f"element={kwargs['element']!r} is not an element id")
    argument = None
    if kind in NEEDS_ARGUMENT:
        if "argument" not in kwargs or kwargs["argument"] is None:
            return _none(code, f'"{kwargs["action"]}" needs argument=...')
        argument = str(kwargs["argument"])
    return Action(kind, element=element, argument=argument, text=code)


def _element_id(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


# -- webarena ---------------------------------------------------------------------------------------


def _extract_webarena(text: str) -> str:
    fence = re.compile(r"```((?:.|\n)*?)```")
    if ANSWER_PHRASE in text:
        match = fence.search(text, text.rindex(ANSWER_PHRASE))
        if match:
            return match.group(1).strip()
    match = fence.search(text)
    if match:
        return match.group(1).strip()
    return text.strip()


def _parse_webarena(text: str) -> Action:
    code = _extract_webarena(text)
    if not code:
        return _none(code, "no action", "webarena")
    name = code.split("[")[0].strip() if "[" in code else code.split()[0].strip()

    def fail(reason: str) -> Action:
        return _none(code, reason, "webarena")

    def act(kind: str, element: int | None = None, argument: str | None = None) -> Action:
        return Action(kind, element=element, argument=argument, text=code, space="webarena")

    if name in ("click", "hover"):
        match = re.search(r"\[(\d+)\]", code)
        return act(name, int(match.group(1))) if match else fail(f"{name} needs [id]")
    if name == "type":
        if not code.endswith(("[0]", "[1]")):
            code_full = code + " [1]"
        else:
            code_full = code
        match = re.search(r"\[(\d+)\] \[(.+)\] \[(\d+)\]", code_full, re.DOTALL)
        if not match:
            return fail("type needs [id] [text] [0|1]")
        typed = match.group(2) + ("\n" if match.group(3) == "1" else "")
        return act("type", int(match.group(1)), typed)
    if name == "press":
        match = re.search(r"\[(.+)\]", code)
        return act("press", argument=match.group(1)) if match else fail("press needs [key_comb]")
    if name == "scroll":
        match = re.search(r"\[(down|up)\]", code)
        return act(f"scroll_{match.group(1)}") if match else fail("scroll needs [down] or [up]")
    if name == "goto":
        match = re.search(r"\[(.+)\]", code)
        return act("goto", argument=match.group(1)) if match else fail("goto needs [url]")
    if name == "tab_focus":
        match = re.search(r"\[(\d+)\]", code)
        return act("tab_focus", argument=match.group(1)) if match else fail("tab_focus needs [index]")
    if name in ("new_tab", "close_tab", "go_forward"):
        return act(name)
    if name == "go_back":
        return act("go_backward")
    if name == "stop":
        match = re.search(r"\[(.*)\]", code, re.DOTALL)
        return act("stop", argument=match.group(1) if match else "")
    return fail(f"unknown action {name!r}")


# -- execution --------------------------------------------------------------------------------------

_KEY_NAMES = {
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "meta": "Meta",
    "command": "Meta",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "esc": "Escape",
    "escape": "Escape",
    "backspace": "Backspace",
    "delete": "Delete",
    "space": "Space",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "home": "Home",
    "end": "End",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
}

_SELECT_JS = """([label, x, y, wanted]) => {
  const near = (el) => !el ? null
    : (el.localName === "select" ? el : (el.querySelector("select") || el.closest("select")));
  let select = near(document.querySelector(`[data-label-id="${label}"]`));
  if (!select) select = near(document.elementFromPoint(x, y));
  if (!select) return {error: "no <select> at this element"};
  const options = Array.from(select.options);
  const index = options.findIndex((o) => o.text.toLowerCase().includes(wanted.toLowerCase()));
  if (index < 0) return {error: "no option contains " + JSON.stringify(wanted),
                         options: options.map((o) => o.text.trim())};
  select.focus();
  select.selectedIndex = index;
  select.dispatchEvent(new Event("input", {bubbles: true}));
  select.dispatchEvent(new Event("change", {bubbles: true}));
  return {index: index, text: options[index].text.trim()};
}"""

_SCROLL_WINDOW_JS = """(sign) => {
  const el = document.scrollingElement || document.body;
  el.scrollTop = el.scrollTop + sign * window.innerHeight;
}"""

_FRAME_JS = "() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))"


async def execute(action: Action, page, obs, click_at: str = "box", cdp=None, may_visit=None):
    """Carry out `action` in `page` (observed as `obs`, with the same `click_at`). Raises ActionError when it
    cannot be done (unknown element id, no matching option, ...) or would load a URL that `may_visit` (a
    predicate, None: any) refuses. Returns the page that is current afterwards when a tab action changed it
    (new_tab, tab_focus, close_tab), else None. `cdp`: a CDP session of `page`, with which typing asks whether the
    page listens to keys (see _type); without one, text is typed key by key."""
    kind = action.kind
    if kind in ("none", "exit", "stop"):
        return None
    webarena = action.space == "webarena"

    async def leaving(point: tuple[float, float] | None = None, url: str | None = None) -> None:
        """Refuse, untouched, an action that would load `url`, or whatever the element at `point` (None: the
        focused element) would load when activated."""
        if may_visit is None:
            return
        if url is None:
            url = await page.evaluate(_DESTINATION_JS, list(point) if point else None)
        if url is not None and not may_visit(url):
            raise ActionError(f"{kind} to {url[:200]!r} refused: only the task's sites may be visited", untouched=True)

    if kind == "click":
        x, y = await _click_point(action, page, obs, click_at, arm=True)
        await leaving((x, y))
        await _navigating(page, lambda: page.mouse.click(x, y), armed=True)
    elif kind == "hover":
        x, y = _centre(action, obs)
        await page.mouse.move(x, y)
    elif kind == "type" and webarena:  # click and type, no clearing; a trailing "\n" presses Enter
        x, y = _centre(action, obs)
        await leaving((x, y))
        await page.mouse.click(x, y)
        text = action.argument or ""
        if text.endswith("\n"):
            await _type(page, text[:-1], cdp)
            await _navigating(page, lambda: page.keyboard.press("Enter"))
        else:
            await _type(page, text, cdp)
    elif kind in ("type", "search"):
        x, y = _centre(action, obs)
        await leaving((x, y))
        await page.mouse.click(x, y)
        await page.keyboard.press("Control+A")
        await page.keyboard.press("Backspace")
        await _type(page, action.argument or "", cdp)
        if kind == "search":  # VAB waits a fixed 2 s here; _type waits for the page to react to the keys
            await _navigating(page, lambda: page.keyboard.press("Enter"))
    elif kind == "select":
        x, y = await _click_point(action, page, obs, click_at, arm=True)
        await leaving((x, y))
        try:
            result = await _navigating(
                page, lambda: page.evaluate(_SELECT_JS, [action.element, x, y, action.argument]), armed=True
            )
        except PlaywrightError as err:  # the change handler navigated away while the call returned: done
            if "context was destroyed" not in str(err) and "navigat" not in str(err):
                raise
            result = None
        if result and result.get("error"):
            options = result.get("options")
            raise ActionError(result["error"] + (f" (options: {options})" if options else ""), untouched=True)
    elif kind in ("scroll_up", "scroll_down"):
        sign = -1 if kind == "scroll_up" else 1
        if webarena:  # one window height, by setting scrollTop
            await page.evaluate(_SCROLL_WINDOW_JS, sign)
        else:  # VAB: mouse wheel by 2/3 of the viewport height
            height = (page.viewport_size or {}).get("height") or await page.evaluate("() => window.innerHeight")
            await page.mouse.wheel(0, sign * height * 2 / 3)
            await _quiet(page)
    elif kind == "press_enter":
        await leaving()
        await _navigating(page, lambda: page.keyboard.press("Enter"))
    elif kind == "press":
        await leaving()
        await _navigating(page, lambda: page.keyboard.press(_key_combination(action.argument or "")))
    elif kind in ("go_backward", "go_forward"):
        go = page.go_back if kind == "go_backward" else page.go_forward
        try:
            await go(wait_until="load", timeout=NAVIGATION_TIMEOUT_MS)  # no history entry: a no-op
        except PlaywrightError as err:
            raise ActionError(f"{kind} failed: {str(err).splitlines()[0]}") from err
    elif kind == "goto":
        await leaving(url=action.argument or "")
        try:
            await page.goto(action.argument or "", wait_until="load", timeout=NAVIGATION_TIMEOUT_MS)
        except PlaywrightError as err:
            raise ActionError(f"goto {action.argument!r} failed: {str(err).splitlines()[0]}") from err
    elif kind == "new_tab":
        new = await page.context.new_page()
        return new
    elif kind == "tab_focus":
        pages = page.context.pages
        index = int(action.argument or 0)
        if not 0 <= index < len(pages):
            raise ActionError(f"no tab {index} (there are {len(pages)})", untouched=True)
        await pages[index].bring_to_front()
        return pages[index]
    elif kind == "close_tab":
        context = page.context
        await page.close()
        pages = context.pages
        current = pages[-1] if pages else await context.new_page()
        await current.bring_to_front()
        return current
    else:
        raise ActionError(f"action {kind!r} cannot be executed", untouched=True)
    return None


def _centre(action: Action, obs) -> tuple[float, float]:
    box = obs.boxes.get(action.element) if action.element is not None else None
    if box is None:
        known = sorted(obs.boxes)
        hint = f"ids on this page: {known[0]}-{known[-1]}" if known else "this page has no element ids"
        raise ActionError(f"element {action.element} is not on the page ({hint})", untouched=True)
    x, y, w, h = box
    return x + w / 2, y + h / 2


async def _click_point(action: Action, page, obs, click_at: str, arm: bool = False) -> tuple[float, float]:
    """Where Click and Select Dropdown Option land (see the module's docstring). `arm`: also arm the page for
    `_navigating` (in the same round trip when the box is measured)."""
    x, y = _centre(action, obs)
    if click_at == "line" or obs.kind == "axtree":
        if arm:
            await _arm(page)
        return x, y
    box = await page.evaluate(_ARM_AND_BOX_JS if arm else _BOX_JS, str(action.element))
    if box is None:
        raise ActionError(f"element {action.element} is no longer on the page", untouched=True)
    bx, by, bw, bh = box
    return bx + bw / 2, by + bh / 2


# What activating the element at a point ([x, y]; null: the focused element) would load: the href of its link, the
# action of the form a submit button or a field (Enter) would submit; else null.
_DESTINATION_JS = """(point) => {
  const el = point === null ? document.activeElement : document.elementFromPoint(point[0], point[1]);
  const link = el?.closest("a[href], area[href]");
  if (link) return link.href;
  if (!el?.form) return null;
  return ["submit", "image"].includes(el.type) ? el.formAction : el.form.action;
}"""


# The labelled element's bounding box when it has a layout box, else null. One evaluate in the page's own world, in
# place of Playwright's query_selector + bounding_box + dispose: three round trips, and the first query on each
# new document injects Playwright's selector engine into it (~100 ms of CPU). Its box is DOM.getBoxModel's border
# quad, which for every element has the client bounding box's centre (an SVG shape's quad adds its stroke on all
# sides: the same centre to float32 rounding, ~3e-5 px); tests/env/test_actions.py compares the two.
_BOX_JS = """(id) => {
  const el = document.querySelector(`[data-label-id="${id}"]`);
  if (el === null || el.getClientRects().length === 0) return null;
  const r = el.getBoundingClientRect();
  return [r.x, r.y, r.width, r.height];
}"""


# What typing key by key fires that one inserted text does not, or fires once instead of per character.
_TYPING_EVENTS = frozenset(
    {
        "keydown",
        "keypress",
        "keyup",
        "beforeinput",
        "input",
        "textInput",
        "compositionstart",
        "compositionupdate",
        "compositionend",
    }
)
# The focused element when it is a plain text field (a text-like <input> or a <textarea>), then its ancestors (across
# shadow roots), the document and the window: every target a typing event reaches. Else null.
_FIELD_PATH_JS = """(() => {
  const el = document.activeElement;
  const plain = el !== null && (el.localName === "textarea" || (el.localName === "input"
    && ["text", "search", "email", "url", "tel", "password"].includes(el.type)));
  if (!plain) return null;
  const path = [];
  for (let node = el; node; node = node.parentNode || node.host) path.push(node);
  path.push(window);
  return path;
})()"""


async def _type(page, text: str, cdp=None) -> None:
    """Type `text` into the focused field. VAB types key by key (keydown, keypress, input, keyup per character),
    and so does webrl wherever that can matter: when the field is not a plain text field, the text holds a control
    character (Enter, Tab), or anything on the events' path listens to key, input or composition events (asked of
    DOMDebugger.getEventListeners; MiniWoB++'s autocomplete and many of its pages do). Where nothing listens (the
    embedded sites), the text goes in with one Input.insertText: the same value, one round trip instead of two per
    character. Typed key by key, the text is followed by two animation frames: the page has reacted to the last key
    (a keydown handler's timer has run) before anything else looks at it."""
    if not text:
        return
    if text.isprintable() and cdp is not None:
        try:
            listened = await _listens_to_typing(cdp)
        except PlaywrightError:  # e.g. the page navigated meanwhile
            listened = True
        if not listened:
            await page.keyboard.insert_text(text)
            return
    await page.keyboard.type(text)
    await _quiet(page)


async def _listens_to_typing(cdp) -> bool:
    """Whether typing in the focused element can be told from inserting the text (see _type): three round trips."""
    group = "webrl-typing"
    try:
        path = (await cdp.send("Runtime.evaluate", {"expression": _FIELD_PATH_JS, "objectGroup": group}))["result"]
        if path.get("subtype") != "array":
            return True  # no plain text field has the focus
        nodes = await cdp.send("Runtime.getProperties", {"objectId": path["objectId"], "ownProperties": True})
        ids = [p["value"]["objectId"] for p in nodes["result"] if p["name"].isdigit() and "objectId" in p["value"]]
        found = await asyncio.gather(*(cdp.send("DOMDebugger.getEventListeners", {"objectId": i}) for i in ids))
        return any(listener["type"] in _TYPING_EVENTS for each in found for listener in each["listeners"])
    finally:
        await cdp.send("Runtime.releaseObjectGroup", {"objectGroup": group})


def _key_combination(keys: str) -> str:
    parts = [p.strip() for p in keys.split("+")]
    return "+".join(_KEY_NAMES.get(p.lower(), p) for p in parts if p)


async def _quiet(page) -> None:
    """Wait two animation frames (the page has reacted to the input)."""
    # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result when a cancellation (Ctrl-C) lands
    # as the page answers, and the run goes on as if never interrupted
    with contextlib.suppress(PlaywrightError, TimeoutError):  # a navigation replaced the page: nothing to wait for
        async with asyncio.timeout(1.0):
            await page.evaluate(_FRAME_JS)


# Before an input that may navigate: a flag the page raises when a navigation of this document begins
# (Navigation API `navigate` event, or beforeunload).
_ARM_JS = """() => {
  window.__webrl_navigating = false;
  if (window.__webrl_armed) return;
  window.__webrl_armed = true;
  const raise = () => { window.__webrl_navigating = true; };
  if (window.navigation) window.navigation.addEventListener("navigate", raise);
  window.addEventListener("beforeunload", raise);
}"""
# Click and Select arm the page and measure their element in one round trip.
_ARM_AND_BOX_JS = f"(id) => {{ ({_ARM_JS})(); return ({_BOX_JS})(id); }}"
# After the input: one task later (a scheduled form submission has run by then), is a navigation pending?
_PENDING_JS = "() => new Promise((resolve) => setTimeout(() => resolve(window.__webrl_navigating === true), 0))"


async def _arm(page) -> None:
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(_ARM_JS)


async def _navigating(page, trigger, armed: bool = False):
    """Run `trigger`; if it navigates the page, wait until the new document has loaded its DOM, so the next
    observation sees the new page rather than a dying one. Whether a navigation began is asked of the page
    (one round trip), not guessed from a fixed delay. `armed`: the caller has just run _ARM_JS in the page."""
    started, committed, failed = asyncio.Event(), asyncio.Event(), asyncio.Event()

    def on_request(request) -> None:
        if request.is_navigation_request() and request.frame == page.main_frame:
            started.set()

    def on_failed(request) -> None:
        if request.is_navigation_request() and request.frame == page.main_frame:
            failed.set()

    def on_navigated(frame) -> None:
        if frame == page.main_frame:
            committed.set()

    page.on("request", on_request)
    page.on("requestfailed", on_failed)
    page.on("framenavigated", on_navigated)
    try:
        if not armed:
            await _arm(page)
        result = await trigger()
        pending = started.is_set() or committed.is_set()
        if not pending:
            try:
                pending = bool(await page.evaluate(_PENDING_JS))
            except PlaywrightError:  # the document went away meanwhile: that was a navigation
                pending = True
        if not pending and not (started.is_set() or committed.is_set()):
            return result
        # Wait for the commit (or the navigation's failure, e.g. a blocked origin), then for the new DOM.
        # A navigation that never commits (a download) ends the wait at the cap; the env's settle step follows.
        waiters = [asyncio.ensure_future(committed.wait()), asyncio.ensure_future(failed.wait())]
        try:
            await asyncio.wait(waiters, timeout=NAVIGATION_TIMEOUT_MS / 1000, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if committed.is_set():
            with contextlib.suppress(PlaywrightError):
                await page.wait_for_load_state("domcontentloaded", timeout=NAVIGATION_TIMEOUT_MS)
        return result
    finally:
        page.remove_listener("request", on_request)
        page.remove_listener("requestfailed", on_failed)
        page.remove_listener("framenavigated", on_navigated)
