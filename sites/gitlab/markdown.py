"""A small Markdown renderer (headings, paragraphs, lists, quotes, fenced code, inline code, emphasis,
links, images, horizontal rules, GitLab's #123 issue references and :emoji: shortcodes)."""

from __future__ import annotations

import re
from html import escape

EMOJI = {"thumbsup": "\U0001f44d", "thumbsdown": "\U0001f44e", "tada": "\U0001f389", "smile": "\U0001f604",
         "heart": "\u2764\ufe0f", "rocket": "\U0001f680", "eyes": "\U0001f440", "white_check_mark": "\u2705"}

_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)"), r'<img src="\2" alt="\1">'),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), r'<a href="\2">\1</a>'),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"__([^_]+)__"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?!\w)"), r"<em>\1</em>"),
    (re.compile(r"(?<!\w)_([^_\s][^_]*)_(?!\w)"), r"<em>\1</em>"),
    (re.compile(r"~~([^~]+)~~"), r"<del>\1</del>"),
]


def inline(text: str, issue_base: str | None = None) -> str:
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{escape(part[1:-1])}</code>")
            continue
        s = escape(part, quote=False)
        for pattern, repl in _INLINE:
            s = pattern.sub(repl, s)
        if issue_base:
            s = re.sub(r"(?<![\w&/])#(\d+)\b", lambda m: f'<a href="{issue_base}/{m.group(1)}" class="gfm gfm-issue">#{m.group(1)}</a>', s)
        s = re.sub(r":([a-z_]+):", lambda m: EMOJI.get(m.group(1), m.group(0)), s)
        out.append(s)
    return "".join(out)


def render(text: str, issue_base: str | None = None) -> str:
    """Markdown -> HTML. Raw HTML in the source is escaped."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    html: list[str] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            html.append("<p>" + "<br>".join(inline(p, issue_base) for p in para) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            lang = stripped[3:].strip()
            i += 1
            code = []
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            cls = f' class="language-{escape(lang)}"' if lang else ""
            html.append(f'<pre class="code highlight"><code{cls}>{escape(chr(10).join(code))}</code></pre>')
            i += 1
            continue
        if not stripped:
            flush()
            i += 1
            continue
        if m := re.match(r"(#{1,6})\s+(.*)", stripped):
            flush()
            level = len(m.group(1))
            title = m.group(2).strip().rstrip("#").strip()
            anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            html.append(f'<h{level} id="{anchor}">{inline(title, issue_base)}</h{level}>')
            i += 1
            continue
        if re.fullmatch(r"(-{3,}|\*{3,}|_{3,})", stripped):
            flush()
            html.append("<hr>")
            i += 1
            continue
        if stripped.startswith(">"):
            flush()
            quote = []
            while i < len(lines) and lines[i].strip().startswith(">"):
                quote.append(lines[i].strip()[1:].lstrip())
                i += 1
            html.append(f"<blockquote>{render(chr(10).join(quote), issue_base)}</blockquote>")
            continue
        if re.match(r"([-*+]|\d+[.)])\s+", stripped):
            flush()
            ordered = bool(re.match(r"\d", stripped))
            items = []
            while i < len(lines) and re.match(r"\s*([-*+]|\d+[.)])\s+", lines[i]):
                item = re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", lines[i])
                if m := re.match(r"\[([ xX])\]\s+(.*)", item):
                    box = " checked" if m.group(1) != " " else ""
                    items.append(f'<li class="task-list-item"><input type="checkbox" disabled{box}> {inline(m.group(2), issue_base)}</li>')
                else:
                    items.append(f"<li>{inline(item, issue_base)}</li>")
                i += 1
            tag = "ol" if ordered else "ul"
            html.append(f"<{tag}>{''.join(items)}</{tag}>")
            continue
        para.append(stripped)
        i += 1
    flush()
    return "\n".join(html)
