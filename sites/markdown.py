"""User-written text as HTML, for every site that renders Markdown: CommonMark (markdown-it-py) with raw HTML
shown as text and markdown-it's link check (no javascript:, vbscript:, file: or non-image data: URLs), so a
post, comment or issue cannot add markup, attributes or scripts to the page that agents and evaluators read.
Each site adds what its real counterpart renders on top: GitLab's flavour (tables, strikethrough, task lists,
heading anchors, #123 references, :emoji:) and Postmill's (line breaks, bare links, rel="nofollow").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import urljoin

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

EMOJI = {
    "thumbsup": "\U0001f44d",
    "thumbsdown": "\U0001f44e",
    "tada": "\U0001f389",
    "smile": "\U0001f604",
    "heart": "\u2764\ufe0f",
    "rocket": "\U0001f680",
    "eyes": "\U0001f440",
    "white_check_mark": "\u2705",
}
ISSUE_REFERENCE = re.compile(r"(?<![\w&/])#(\d+)\b")
BARE_LINK = re.compile(r"https?://[^\s<]+")
TASK = re.compile(r"\[([ xX])\]\s+")


def _link(href: str, text: str, **attrs: str) -> list[Token]:
    opening = Token("link_open", "a", 1, attrs={"href": href, **attrs})
    return [opening, Token("text", "", 0, content=text), Token("link_close", "a", -1)]


def _text_outside_links(state: StateCore) -> Iterator[tuple[Token, int]]:
    """(inline token, child index) of every text token not inside a link, last first (so splitting one keeps
    the indices of those still to come)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        depth, found = 0, []
        for i, child in enumerate(block.children):
            depth += {"link_open": 1, "link_close": -1}.get(child.type, 0)
            if child.type == "text" and depth == 0:
                found.append(i)
        yield from ((block, i) for i in reversed(found))


def _split_text(
    pattern: re.Pattern, make: Callable[[re.Match, dict], list[Token] | None]
) -> Callable[[StateCore], None]:
    """A core rule that replaces each match of `pattern` in text outside links by the tokens `make` returns
    (None: leave that match as text)."""

    def rule(state: StateCore) -> None:
        for block, i in _text_outside_links(state):
            text, pieces, last = block.children[i].content, [], 0
            for match in pattern.finditer(text):
                tokens = make(match, state.env)
                if tokens is None:
                    continue
                pieces += [Token("text", "", 0, content=text[last : match.start()]), *tokens]
                last = match.end()
            if pieces:
                block.children[i : i + 1] = [*pieces, Token("text", "", 0, content=text[last:])]

    return rule


def _emoji(state: StateCore) -> None:
    for block, i in _text_outside_links(state):
        token = block.children[i]
        token.content = re.sub(r":([a-z_]+):", lambda m: EMOJI.get(m.group(1), m.group(0)), token.content)


def _heading_anchors(state: StateCore) -> None:
    for heading, inline in zip(state.tokens, state.tokens[1:]):
        if heading.type == "heading_open":
            heading.attrSet("id", re.sub(r"[^\w\- ]", "", inline.content.lower()).replace(" ", "-"))


def _task_lists(state: StateCore) -> None:
    """`- [ ] x` / `- [x] x` items: a disabled checkbox, as GitLab shows them."""
    tokens = state.tokens
    for k, token in enumerate(tokens[:-2]):
        inline = tokens[k + 2]
        if token.type != "list_item_open" or inline.type != "inline" or not inline.children:
            continue
        first = inline.children[0]
        match = TASK.match(first.content) if first.type == "text" else None
        if match:
            token.attrSet("class", "task-list-item")
            first.content = first.content[match.end() :]
            checked = " checked" if match.group(1) != " " else ""
            inline.children.insert(
                0, Token("html_inline", "", 0, content=f'<input type="checkbox" disabled{checked}> ')
            )


def _relative_links(state: StateCore) -> None:
    """A repository file's relative links (`LICENSE`, `docs/a.md`, `../b.png`) point into the repository, at
    the file's folder (env["file_base"], e.g. /ns/project/-/blob/main/), as GitLab resolves them."""
    base = state.env.get("file_base")
    if not base:
        return
    for block in state.tokens:
        for child in block.children or []:
            attr = {"link_open": "href", "image": "src"}.get(child.type)
            target = child.attrGet(attr) if attr else None
            if target and not re.match(r"[a-zA-Z][\w+.-]*:|[/#?]", target):  # no scheme, not site-absolute
                folder = base if attr == "href" else base.replace("/-/blob/", "/-/raw/", 1)  # images: the file
                child.attrSet(attr, urljoin(folder, target))


def _strikethrough_as_del(state: StateCore) -> None:
    for block in state.tokens:
        for child in block.children or []:
            if child.type in ("s_open", "s_close"):
                child.tag = "del"


def _gitlab() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])
    md.core.ruler.push(
        "issue_references",
        _split_text(
            ISSUE_REFERENCE,
            lambda m, env: _link(f"{env['issue_base']}/{m.group(1)}", m.group(0), **{"class": "gfm gfm-issue"})
            if env.get("issue_base")
            else None,
        ),
    )
    for name, rule in (
        ("emoji", _emoji),
        ("heading_anchors", _heading_anchors),
        ("task_lists", _task_lists),
        ("relative_links", _relative_links),
        ("strikethrough_as_del", _strikethrough_as_del),
    ):
        md.core.ruler.push(name, rule)
    fence = md.renderer.rules["fence"]
    md.add_render_rule(
        "fence",
        lambda self, tokens, idx, options, env: fence(tokens, idx, options, env).replace(
            "<pre>", '<pre class="code highlight">', 1
        ),
    )
    return md


def _postmill() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["strikethrough"])
    md.core.ruler.push("bare_links", _split_text(BARE_LINK, lambda m, env: _link(m.group(0), m.group(0))))

    def nofollow(state: StateCore) -> None:
        for block in state.tokens:
            for child in block.children or []:
                if child.type == "link_open":
                    child.attrSet("rel", "nofollow")

    md.core.ruler.push("nofollow", nofollow)
    return md


_GITLAB, _POSTMILL = _gitlab(), _postmill()


def gitlab_markdown(text: str | None, issue_base: str | None = None, file_base: str | None = None) -> str:
    """GitLab's rendering; `#123` links to `<issue_base>/123` when an issue base is given, and relative links
    resolve against `file_base` (the folder of the repository file being shown) when one is."""
    return _GITLAB.render(text or "", {"issue_base": issue_base, "file_base": file_base})


def postmill_markdown(text: str | None) -> str:
    """Postmill's rendering of submissions, comments, biographies and forum sidebars."""
    return _POSTMILL.render(text or "")
