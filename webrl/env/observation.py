"""What the agent sees of a page: VAB/WebRL simplified HTML (`webrl`), the same made compact for small models
(`compact`), or WebArena's accessibility tree (`axtree`).

`webrl`, as VAB-WebArena-Lite's `html_tools` make it. One `page.evaluate` of
js/mark_page.js per step:
  1. every element of a clone of the document gets `data-backend-node-id` (document order), `data-bbox`
     (its first client rect as "left,top,width,height": the four edges rounded, then width = right - left and
     height = bottom - top), `data-text` (its own text nodes, each trimmed with runs of 2+ whitespace characters,
     U+00A0 included, made one space, joined by ","); a <select> gets `data-value` and `data-text` (the chosen
     option) and that option `data-status="selected"`; an input whose type attribute is "checkbox"
     `data-status="checked|not-checked"`; inputs and textareas `data-value` (their live value);
  2. interactive elements: client rects whose centre hits the element (`elementFromPoint`) cover at least
     1 px² of the viewport, and one of: onclick, cursor pointer, an image whose usemap names a <map>, an
     interactive role, contenteditable "", "true" or "contenteditable", a jsaction rule that is a click (a bare
     `ns.method` rule is one; `click:none.x` is not), an interactive tag, a label with an enabled control, an
     image with an inline zoom cursor, a class containing "button", tabindex >= 0. Interactive elements
     containing other interactive ones are dropped;
  3. the rest get `data-label-id` 0, 1, 2, ... in document order when their first client rect, clipped to the
     viewport, has a positive width or height (set on the live page too: actions find the element by it).
Then `simplify_html` reads the clone as VAB's HtmlParser does: comments, <style> and <script> elements are cut
from the serialised page by pattern and whitespace runs made one space; lxml parses its UTF-8 bytes, so a page
that declares no charset in a <meta> is decoded as Latin-1 (mojibake, as in VAB). Only the attributes of
`KEPT_ATTRIBUTES` stay (empty values, `type="hidden"` and repeated values of one element are left out), text and
values are trimmed and cut to 500 characters. An element is printed as `<tag id="N" attr="..."> text children
</tag>` (`id` only when labelled) if it is visible (its box meets the viewport and it is not aria-hidden, or it is
an <option> of a printed <select>, or it is labelled) and it has text, a kept attribute besides data-bbox, a
label, or more than one child whose subtree has text or kept attributes. Otherwise only its children's output is
kept. As in VAB, an element's text is the text before its first child; later text of the element shows in its
`data-text`. Values and text are printed raw, `"`, `<` and `>` included, as VAB prints them; `escape=True`
prints `&quot;`, `&lt;`, `&gt;` instead so that the markup stays unambiguous (not VAB's).

`compact` (not VAB's; docs/fidelity.md): the same elements, ids and text, without `data-bbox`, without a
`data-text` that only repeats the element's printed text, and without the spaces VAB puts beside every tag.
Positions are the tokens a small model reads least (40% of a MiniWoB++ prompt's tokens), repeated text doubles every
label, and the spaces are a fifth of what is left; a `data-text` that holds more than the printed text (text after
the element's first child) stays, so nothing but positions is lost.

`axtree`: CDP Accessibility.getFullAXTree with layout bounds from DOMSnapshot.captureSnapshot,
nodes outside the viewport dropped (children re-parented), one line per node `[id] role 'name' props`
indented by tabs, under a `Tab 0 (current): title | Tab 1: title` header and a blank line. Ids are the CDP AX
node ids (integers). Ignored and InlineTextBox nodes are skipped like filtered ones; the root's box is
[0, 0, 10, 10]; the in-viewport ratio keeps WebArena's precedence quirk (`viewport_ratio`); a StaticText line
is dropped when its text is empty or occurs in one of the 3 lines kept before it.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from playwright.async_api import Error as PlaywrightError

TEXT_LIMIT = 500
KEPT_ATTRIBUTES = (
    "title",
    "value",
    "type",
    "placeholder",
    "selected",
    "data-value",
    "data-text",
    "data-testid",
    "data-label",
    "data-bbox",
    "data-status",
)
LABEL_ATTRIBUTE = "data-label-id"


@dataclass
class Observation:
    text: str  # what the policy sees
    url: str
    title: str
    ids: list[int]  # element ids that appear in `text`, ascending
    # id -> (x, y, w, h), CSS px of the viewport: webrl's data-bbox (click_at "line": the first line box), axtree's
    # layout box
    boxes: dict[int, tuple[float, float, float, float]]
    kind: str = "webrl"  # "webrl" | "compact" | "axtree"
    elapsed_ms: float = 0.0  # time observe() took
    timings_ms: dict[str, float] = field(default_factory=dict)


async def observe(page, kind: str = "webrl", *, escape: bool = False, click_at: str = "box") -> Observation:
    """Observe the page's current viewport. Same page state -> same ids and text. For `webrl`, `escape` prints
    quotes and angle brackets as entities, and `click_at` says which box of an element `boxes` holds: "box" its
    data-bbox, "line" its first line box of at least 1 px² (see webrl.env.actions). `compact` is `webrl` printed
    without positions and repeated text."""
    start = time.perf_counter()
    if kind in ("webrl", "compact"):
        obs = await _observe_webrl(page, escape, click_at, compact=kind == "compact")
    elif kind == "axtree":
        obs = await _observe_axtree(page)
    else:
        raise ValueError(f"unknown observation kind {kind!r} (webrl, compact or axtree)")
    obs.elapsed_ms = round((time.perf_counter() - start) * 1000, 1)
    return obs


# -- webrl: simplified HTML ------------------------------------------------------------------------


@cache
def _script(name: str) -> str:
    return resources.files("webrl.env").joinpath("js").joinpath(name).read_text(encoding="utf-8")


async def _evaluate(page, script: str, arg=None, tries: int = 3):
    """page.evaluate that survives a navigation committing meanwhile (waits for the new document)."""
    for attempt in range(tries):
        try:
            return await page.evaluate(script, arg)
        except PlaywrightError as err:
            message = str(err)
            if attempt == tries - 1 or not any(
                s in message for s in ("Execution context was destroyed", "navigat", "Cannot find context")
            ):
                raise
            with contextlib.suppress(PlaywrightError):  # still loading: the retry tells
                await page.wait_for_load_state("load", timeout=5000)


async def _observe_webrl(page, escape: bool, click_at: str, compact: bool = False) -> Observation:
    t0 = time.perf_counter()
    marked = await _evaluate(page, _script("mark_page.js"), click_at)
    if marked.get("error"):
        marked = await _evaluate(page, _script("mark_page.js"), click_at)  # the DOM changed during the call
        if marked.get("error"):
            raise RuntimeError(f"observation failed: {marked['error']}")
    t1 = time.perf_counter()
    text = simplify_html(marked["html"], tuple(marked["viewport"]), escape, compact)
    t2 = time.perf_counter()
    boxes = {int(i): (float(x), float(y), float(w), float(h)) for i, x, y, w, h in marked["boxes"]}
    ids = sorted({int(m) for m in _PRINTED_ID.findall(text)})
    return Observation(
        text=text,
        url=marked["url"],
        title=marked["title"],
        ids=ids,
        boxes=boxes,
        kind="compact" if compact else "webrl",
        timings_ms={"mark": round((t1 - t0) * 1000, 1), "serialise": round((t2 - t1) * 1000, 1)},
    )


_PRINTED_ID = re.compile(r'<[^\s<>]+ id="(\d+)"')
# Cut from the serialised page before parsing, in this order, as VAB does (a pattern, not the parser, finds them).
_CUT = (
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"<style.*?>.*?</style>", re.S),
    re.compile(r"<script.*?>.*?</script>", re.S),
)


def _clean(value: str | None) -> str:
    return "" if value is None else value.strip()[:TEXT_LIMIT]


def _escape_attr(value: str) -> str:
    return value.replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_text(value: str) -> str:
    return value.replace("<", "&lt;").replace(">", "&gt;")


def _bbox(value: str | None) -> tuple[float, float, float, float] | None:
    if not value:
        return None
    try:
        x, y, w, h = (float(v) for v in value.split(","))
    except ValueError:
        return None
    return x, y, w, h


def simplify_html(
    marked_html: str, viewport: tuple[float, float] = (1280, 720), escape: bool = False, compact: bool = False
) -> str:
    """Serialise a page marked by js/mark_page.js into the simplified HTML the policy sees (`compact`: without
    positions and repeated text, see the module's docstring)."""
    import lxml.html

    for pattern in _CUT:
        marked_html = pattern.sub("", marked_html)
    # Runs of whitespace made one space, ends stripped: VAB's re.sub(r"\s+", " ", ...).strip(), in a fifth of the time
    # (str.split and re's \s both take whitespace as str.isspace does: tests/env/test_observation.py checks it).
    marked_html = " ".join(marked_html.split())
    if not marked_html:
        return ""
    # Bytes, not the string: lxml then takes the encoding from the page's <meta>, and Latin-1 without one.
    root = lxml.html.fromstring(marked_html.encode("utf-8"))
    vw, vh = viewport
    separator = "" if compact else " "  # compact: no space beside a tag (text is only ever printed inside one)

    def visible(node) -> bool:
        if node.get("aria-hidden") == "true":
            return False
        box = _bbox(node.get("data-bbox"))
        if box is None:
            return False
        x, y, w, h = box
        return not (x + w < 0 or x > vw or y + h < 0 or y > vh)

    def walk(node, in_select: bool) -> tuple[str, bool]:
        """(output, whether the subtree has text or kept attributes)."""
        tag = node.tag
        label = node.get(LABEL_ATTRIBUTE, "")
        seen = visible(node)
        candidate = seen or bool(label) or (in_select and tag == "option")
        has_label = bool(label) and seen
        text = _clean(node.text)
        attrs: list[tuple[str, str]] = []
        for name in KEPT_ATTRIBUTES:
            raw = node.get(name)
            if raw is None or (name == "type" and raw == "hidden"):
                continue
            value = _clean(raw)
            if value:
                attrs.append((name, value))
        has_text = bool(text) or any(name != "data-bbox" for name, _ in attrs)

        parts, busy_children = [], 0
        for child in node:
            if not isinstance(child.tag, str):
                continue
            out, busy = walk(child, candidate and tag == "select")
            busy_children += busy
            if out:
                parts.append(out)
        inner = separator.join(parts)
        if candidate and (busy_children > 1 or has_text or has_label):
            if compact:  # what is printed is decided as in VAB's form above; only what it prints is less
                attrs = [(n, v) for n, v in attrs if n != "data-bbox" and not (n == "data-text" and v == text)]
            inner = _render(tag, label, text, inner, attrs, escape, separator)
        return inner, bool(busy_children or has_text)

    return walk(root, False)[0]


def _render(
    tag: str, label: str, text: str, inner: str, attrs: list[tuple[str, str]], escape: bool, separator: str = " "
) -> str:
    head = [f"<{tag}"]
    if label:
        head.append(f' id="{label}"')
    printed: set[str] = set()
    for name, value in attrs:
        if value in printed:  # a value repeated by a later attribute is printed once
            continue
        printed.add(value)
        head.append(f' {name}="{_escape_attr(value) if escape else value}"')
    head.append(">")
    pieces = ["".join(head)]
    if text:
        pieces.append(_escape_text(text) if escape else text)
    if inner:
        pieces.append(inner)
    pieces.append(f"</{tag}>")
    return separator.join(pieces)


# -- axtree: WebArena's accessibility tree -----------------------------------------------------------

IN_VIEWPORT_RATIO_THRESHOLD = 0.6
IGNORED_PROPERTIES = {"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"}
EMPTY_ROLES_DROPPED = {
    "generic",
    "img",
    "list",
    "strong",
    "paragraph",
    "banner",
    "navigation",
    "Section",
    "LabelText",
    "Legend",
    "listitem",
}


def viewport_ratio(box: tuple[float, float, float, float], vw: float, vh: float) -> float:
    """WebArena's in-viewport ratio, including its operator-precedence quirk: the expression is
    `overlap_w * overlap_h / width * height`, i.e. (overlap area / width) * height."""
    x, y, w, h = box
    overlap_w = max(0.0, min(x + w, vw) - max(x, 0.0))
    overlap_h = max(0.0, min(y + h, vh) - max(y, 0.0))
    return overlap_w * overlap_h / w * h


async def _observe_axtree(page) -> Observation:
    t0 = time.perf_counter()
    cdp = await page.context.new_cdp_session(page)
    try:
        tree = await cdp.send("Accessibility.getFullAXTree")
        snapshot = await cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
        sx, sy, vw, vh, title = await _evaluate(
            page, "() => [window.scrollX, window.scrollY, window.innerWidth, window.innerHeight, document.title]"
        )
    finally:
        await cdp.detach()
    t1 = time.perf_counter()

    # Layout bounds (document coordinates) by backend DOM node id, from the main document.
    bounds: dict[int, tuple[float, float, float, float]] = {}
    if snapshot.get("documents"):
        doc = snapshot["documents"][0]
        backend_ids = doc["nodes"]["backendNodeId"]
        layout = doc["layout"]
        for index, (x, y, w, h) in zip(layout["nodeIndex"], layout["bounds"]):
            bid = backend_ids[index]
            if bid not in bounds:
                bounds[bid] = (x - sx, y - sy, w, h)

    nodes = {}
    for node in tree["nodes"]:
        nodes.setdefault(node["nodeId"], node)
    if not nodes:
        return Observation(await _tab_header(page, title) + "\n\n", page.url, title, [], {}, kind="axtree")
    root_id = tree["nodes"][0]["nodeId"]

    lines: list[tuple[str, str, str]] = []  # (line, role, name)
    boxes: dict[int, tuple[float, float, float, float]] = {}

    def box_of(node, is_root: bool):
        if is_root:
            return (0.0, 0.0, 10.0, 10.0)
        bid = node.get("backendDOMNodeId")
        return bounds.get(bid) if bid is not None else None

    def shown(node, is_root: bool) -> tuple[float, float, float, float] | None:
        """The node's box when it survives the viewport filter, else None."""
        if node.get("ignored"):
            return None
        role = node.get("role", {}).get("value", "")
        if role == "InlineTextBox":
            return None
        box = box_of(node, is_root)
        if box is None or box[2] == 0 or box[3] == 0:
            return None
        if viewport_ratio(box, vw, vh) < IN_VIEWPORT_RATIO_THRESHOLD:
            return None
        try:
            int(node["nodeId"])
        except (TypeError, ValueError):
            return None
        return box

    def visit(node_id: str, depth: int, is_root: bool, seen: set) -> None:
        if node_id in seen or node_id not in nodes:
            return
        seen.add(node_id)
        node = nodes[node_id]
        box = shown(node, is_root)
        child_depth = depth
        if box is not None:
            role = str(node.get("role", {}).get("value", ""))
            name = str(node.get("name", {}).get("value", "") or "")
            props = []
            for prop in node.get("properties", []):
                if prop.get("name") in IGNORED_PROPERTIES:
                    continue
                value = prop.get("value", {})
                if "value" in value:
                    props.append(f"{prop['name']}: {value['value']}")
            keep = not (not name.strip() and not props and role in EMPTY_ROLES_DROPPED)
            if keep:
                line = f"[{node['nodeId']}] {role} {name!r}"
                if props:
                    line += " " + " ".join(props)
                lines.append(("\t" * depth + line, role, name))
                boxes[int(node["nodeId"])] = box
                child_depth = depth + 1
        for child in node.get("childIds", []):
            visit(child, child_depth, False, seen)

    visit(root_id, 0, True, set())
    kept = _dedupe_static_text(lines)
    ids = sorted(int(m) for m in re.findall(r"^\t*\[(-?\d+)\]", "\n".join(kept), re.MULTILINE))
    t2 = time.perf_counter()
    text = await _tab_header(page, title) + "\n\n" + "\n".join(kept)
    return Observation(
        text=text,
        url=page.url,
        title=title,
        ids=ids,
        boxes={i: boxes[i] for i in ids},
        kind="axtree",
        timings_ms={"cdp": round((t1 - t0) * 1000, 1), "serialise": round((t2 - t1) * 1000, 1)},
    )


def _dedupe_static_text(lines: list[tuple[str, str, str]]) -> list[str]:
    """Drop a StaticText line whose text is empty or already in one of the previous 3 kept lines."""
    kept: list[str] = []
    for line, role, name in lines:
        if role == "StaticText" and (not name.strip() or any(name in prev for prev in kept[-3:])):
            continue
        kept.append(line)
    return kept


async def _tab_header(page, title: str) -> str:
    titles = []
    for i, other in enumerate(page.context.pages):
        if other is page:
            titles.append(f"Tab {i} (current): {title}")
        else:
            try:
                titles.append(f"Tab {i}: {await other.title()}")
            except PlaywrightError:
                titles.append(f"Tab {i}: {other.url}")
    return " | ".join(titles)
