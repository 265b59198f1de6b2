"""Observations in real Chromium (async Playwright): the VAB/WebRL simplified HTML on the embedded shop and
on a local page of edge cases, the serialiser on its own, and WebArena's accessibility tree."""

from __future__ import annotations

import re
import shutil

import pytest
from env_support import with_page  # tests/env is on sys.path (no __init__.py)

from webrl.env.actions import Action, execute
from webrl.env.observation import KEPT_ATTRIBUTES, Observation, observe, simplify_html, viewport_ratio


def element_id(obs: Observation, text: str) -> int:
    """The id of the labelled element whose printed text is `text`."""
    match = re.search(rf'<\w+ id="(\d+)"[^>]*> {re.escape(text)} <', obs.text)
    assert match, f"no labelled element with text {text!r} in {obs.text[:2000]}"
    return int(match.group(1))


# -- the shop ----------------------------------------------------------------------------------------


def test_shop_home_page(shop):
    async def body(page):
        first = await observe(page)
        second = await observe(page)
        return first, second

    first, second = with_page(body, url=shop)
    assert first.kind == "webrl" and first.url.rstrip("/") == shop.rstrip("/") and first.title == "One Stop Market"
    # Stable: the same page state gives the same text and ids.
    assert second.text == first.text and second.ids == first.ids and second.boxes == first.boxes
    # Labels are 0..n-1 in document order, all printed, each with a box inside the viewport.
    assert first.ids == list(range(len(first.ids))) and len(first.ids) > 20
    assert [int(i) for i in re.findall(r' id="(\d+)"', first.text)] == first.ids
    for i in first.ids:
        x, y, w, h = first.boxes[i]
        assert w > 0 and h > 0 and 0 <= x + w / 2 <= 1280 and 0 <= y + h / 2 <= 720
    # Only the whitelisted attributes (plus the label id) are printed; class/href/style/name never.
    names = set(re.findall(r' ([\w-]+)="', first.text))
    assert names <= set(KEPT_ATTRIBUTES) | {"id"}, names - set(KEPT_ATTRIBUTES)
    assert "data-bbox" in names and "placeholder" in names
    assert first.text.startswith("<html data-bbox=") and first.text.endswith("</html>")
    assert '<input id="' in first.text and 'placeholder="Search entire store here..."' in first.text
    assert "<script" not in first.text and "<style" not in first.text
    assert first.elapsed_ms > 0 and set(first.timings_ms) == {"mark", "serialise"}


def test_clicking_an_id_follows_the_link(shop):
    async def body(page):
        obs = await observe(page)
        await execute(Action("click", element=element_id(obs, "Sports & Outdoors"), text="x"), page, obs)
        await page.wait_for_load_state("load")
        after = await observe(page)
        return page.url, after

    url, after = with_page(body, url=shop)
    assert url.endswith("/sports-outdoors.html")
    assert "Sort By" in after.text and after.url == url


def test_offscreen_elements_are_not_labelled_until_scrolled_into_view(shop):
    async def body(page):
        top = await observe(page)
        await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        bottom = await observe(page)
        return top, bottom

    top, bottom = with_page(body, url=shop)
    assert "Sign In" in top.text and "Sign In" not in bottom.text  # the header is out of view at the bottom
    assert bottom.ids == list(range(len(bottom.ids)))  # ids restart: they number what is visible now
    assert bottom.text != top.text


SYMBOLS = "<p style='font: 14px sans-serif'><span>★★★★★</span> <b>☆ ✓ ✗ → € — … 中文</b> <i>Rating: 100%</i></p>"


def test_the_headless_shell_observes_as_the_full_browser(shop, monkeypatch):
    """webrl.browser prefers the headless shell; with its hinting of fallback fonts set to the full browser's, the
    shop's star ratings (which moved text 1.2 px without it) and other symbols are laid out alike, so the observation
    is byte-identical."""
    from webrl.browser import SYSTEM_CHROMIUM, SYSTEM_HEADLESS_SHELL

    executables = [
        next(filter(None, map(shutil.which, names)), None) for names in (SYSTEM_HEADLESS_SHELL, SYSTEM_CHROMIUM)
    ]
    if None in executables:
        pytest.skip("needs both the headless shell and the full Chromium (Debian's chromium-headless-shell, chromium)")

    async def body(page):
        seen = [await observe(page)]
        for path in ("/office-products.html", "/electronics.html?p=2"):
            await page.goto(shop.rstrip("/") + path)
            seen.append(await observe(page))
        await page.set_content(SYMBOLS)
        seen.append(await observe(page))
        seen.append(
            await page.evaluate(
                "() => [...document.querySelectorAll('span, b, i')].map(e => JSON.stringify(e.getBoundingClientRect()))"
            )
        )
        return [(o.text, o.boxes) if isinstance(o, Observation) else o for o in seen]

    observed = []
    for executable in executables:
        monkeypatch.setenv("WEBRL_CHROMIUM", executable)
        observed.append(with_page(body, url=shop))
    assert observed[0] == observed[1]


# -- a local page of edge cases ------------------------------------------------------------------------

EDGE_CASES = (
    """<!doctype html>
<html><head><title>Edge cases</title>
<style>body { margin: 0; font: 14px sans-serif } .far { position: absolute; top: 2000px }</style>
<script>var ignored = "script text";</script></head>
<body>
<!-- a comment -->
<div onclick="void 0" style="cursor: pointer; width: 300px"><span>Outer card</span> <a href="#inner">Inner link</a></div>
<p>Keep <b>bold</b> tail text</p>
<select id="size"><option value="s">Small</option><option value="m" selected>Medium</option><option value="l">Large</option></select>
<input type="checkbox" id="agree" checked><label for="agree">I agree</label>
<input type="checkbox" id="news">
<input type="text" id="name" value="Ann" placeholder="Your name">
<input type="hidden" name="token" value="secret">
<span aria-hidden="true" class="icon">ICON</span>
<button style="display: none">Hidden button</button>
<button style="visibility: hidden">Invisible button</button>
<a class="far" href="#far">Far away link</a>
<div class="my-button-like">Fake button</div>
<p id="long">"""
    + "word " * 150
    + """</p>
</body></html>"""
)

# The expected observation of EDGE_CASES without its data-bbox attributes (they depend on font metrics).
EDGE_CASES_TEXT = (
    '<html> <body> <div> <span id="0" data-text="Outer card"> Outer card </span>'
    ' <a id="1" data-text="Inner link"> Inner link </a> </div>'
    ' <p data-text="Keep,tail text"> Keep <b data-text="bold"> bold </b> </p>'
    ' <select id="2" data-value="m" data-text="Medium">'
    ' <option value="s" data-text="Small"> Small </option>'
    ' <option value="m" data-text="Medium" data-status="selected"> Medium </option>'
    ' <option value="l" data-text="Large"> Large </option> </select>'
    ' <input id="3" type="checkbox" data-value="on" data-status="checked"> </input>'
    ' <label id="4" data-text="I agree"> I agree </label>'
    ' <input id="5" type="checkbox" data-value="on" data-status="not-checked"> </input>'
    ' <input id="6" value="Ann" type="text" placeholder="Your name"> </input>'
    ' <button data-text="Invisible button"> Invisible button </button>'
    ' <div id="7" data-text="Fake button"> Fake button </div>'
    f' <p data-text="{("word " * 100)}"> {("word " * 100)} </p> </body> </html>'
)


def without_boxes(text: str) -> str:
    return re.sub(r' data-bbox="[^"]*"', "", text)


def test_edge_cases_page():
    async def body(page):
        obs = await observe(page)
        await page.fill("#name", "Bob")
        await page.select_option("#size", "l")
        await page.uncheck("#agree")
        changed = await observe(page)
        labelled = await page.eval_on_selector_all("[data-label-id]", "els => els.map(e => e.textContent.trim())")
        return obs, changed, labelled

    obs, changed, labelled = with_page(body, html=EDGE_CASES)
    assert without_boxes(obs.text) == EDGE_CASES_TEXT
    assert obs.ids == list(range(8)) and set(obs.boxes) == set(obs.ids)
    # Nested clickables: the clickable card holding a link is dropped, its clickable children stay.
    # Not labelled and not printed: offscreen, display:none, aria-hidden, type=hidden, script, style, comment.
    for absent in ("Far away link", "Hidden button", "ICON", "secret", "script text", "margin", "a comment"):
        assert absent not in obs.text
    # visibility:hidden is printed (it has a box, as in VAB) but cannot be clicked, so it has no id.
    assert '<button data-text="Invisible button"' in obs.text
    assert labelled == ["Outer card", "Inner link", "SmallMediumLarge", "", "I agree", "", "", "Fake button"]
    # Live form state shows up: typed value, chosen option, unchecked box.
    assert '<input id="6" value="Ann" type="text" placeholder="Your name" data-value="Bob"' in changed.text
    assert '<select id="2" data-value="l" data-text="Large"' in changed.text
    assert '<option value="l" data-text="Large" data-status="selected">' in changed.text
    assert (
        '<input id="3" type="checkbox" data-value="on"' in changed.text and 'data-status="not-checked"' in changed.text
    )


def test_compact_prints_the_same_elements_without_positions_or_repeated_text():
    async def body(page):
        return await observe(page), await observe(page, "compact")

    full, compact = with_page(body, html=EDGE_CASES + "<div>Enter <b>Ann</b> below</div>")
    assert compact.kind == "compact" and compact.ids == full.ids and compact.boxes == full.boxes
    assert "data-bbox" not in compact.text and compact.text != full.text
    # A data-text that only repeats the printed text goes; one that holds more (text after a child) stays; no space
    # stands beside a tag.
    assert '<div id="7">Fake button</div>' in compact.text
    assert '<div data-text="Enter,below">Enter<b>Ann</b></div>' in compact.text
    # Nothing else differs: take the full observation's boxes, repeated data-text and spaces beside tags away, and
    # the compact text is left.
    repeated = re.sub(r' data-text="([^"]*)"(?=[^>]*> \1 <)', "", without_boxes(full.text))
    assert re.sub(r" ?(<[^<>]*>) ?", r"\1", repeated) == compact.text


# -- the serialiser alone ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        # Repeated values print once (data-value equal to value), empty values and type=hidden are dropped.
        (
            '<html><body data-bbox="0,0,10,10"><input data-label-id="0" value="7" data-value="7" title="" '
            'type="hidden" data-bbox="1,2,3,4"></body></html>',
            '<input id="0" value="7" data-bbox="1,2,3,4"> </input>',
        ),
        # Whitespace collapses; text and values are cut to 500 characters.
        (
            '<html><body><p data-bbox="0,0,5,5" title="a\n\n  b">  x \t y  </p></body></html>',
            '<p title="a b" data-bbox="0,0,5,5"> x y </p>',
        ),
        (
            '<html><body><p data-bbox="0,0,5,5">' + "z" * 600 + "</p></body></html>",
            '<p data-bbox="0,0,5,5"> ' + "z" * 500 + " </p>",
        ),
        # A visible wrapper without text or attributes is printed only when more than one child has content.
        (
            '<html><body><div data-bbox="0,0,9,9"><div data-bbox="0,0,9,9"><i data-bbox="0,0,1,1">a</i></div>'
            "</div></body></html>",
            '<i data-bbox="0,0,1,1"> a </i>',
        ),
        (
            '<html><body><div data-bbox="0,0,9,9"><i data-bbox="0,0,1,1">a</i><i data-bbox="0,0,1,1">b</i>'
            "</div></body></html>",
            '<div data-bbox="0,0,9,9"> <i data-bbox="0,0,1,1"> a </i> <i data-bbox="0,0,1,1"> b </i> </div>',
        ),
        # Outside the viewport, or aria-hidden: the element goes, visible children stay.
        (
            '<html><body><p data-bbox="0,900,5,5">below</p><span aria-hidden="true" data-bbox="0,0,5,5">icon'
            '<b data-bbox="0,0,5,5">kept</b></span></body></html>',
            '<b data-bbox="0,0,5,5"> kept </b>',
        ),
        # Options of a printed select are kept although they have no box; quotes and brackets are printed raw.
        (
            '<html><body><select data-label-id="3" data-bbox="0,0,50,20" data-text="A"><option data-text="A">A'
            '</option><option data-text="&lt;b&gt; &quot;q&quot;">&lt;b&gt; "q"</option></select></body></html>',
            '<select id="3" data-text="A" data-bbox="0,0,50,20"> <option data-text="A"> A </option>'
            ' <option data-text="<b> "q""> <b> "q" </option> </select>',
        ),
        ("", ""),
    ],
)
def test_simplify_html(marked, expected):
    assert simplify_html(marked, (1280, 720)) == expected


def test_whitespace_runs_collapse_as_vabs_pattern_does():
    """simplify_html collapses whitespace with str.split (fast) where VAB uses re.sub(r"\\s+", " ", ...).strip(): the
    same characters count as whitespace for both, every code point."""
    import sys

    pattern = re.compile(r"\s+")
    assert [c for c in range(sys.maxunicode + 1) if bool(pattern.fullmatch(chr(c))) != chr(c).isspace()] == []
    text = " \t<p>a\u00a0\u00a0b\u2003\n c\x1c\x85d</p>\r\n "
    assert " ".join(text.split()) == pattern.sub(" ", text).strip() == "<p>a b c d</p>"


def test_simplify_html_escapes_on_request():
    marked = (
        '<html><body><p data-bbox="0,0,5,5" title="a &quot;b&quot; &lt;c&gt; &amp;">x &lt;y&gt; "z" &amp;</p>'
        "</body></html>"
    )
    assert simplify_html(marked, (1280, 720)) == '<p title="a "b" <c> &" data-bbox="0,0,5,5"> x <y> "z" & </p>'
    assert simplify_html(marked, (1280, 720), escape=True) == (
        '<p title="a &quot;b&quot; &lt;c&gt; &" data-bbox="0,0,5,5"> x &lt;y&gt; "z" & </p>'
    )


# -- VAB's rules, each on a local page where webrl's former behaviour differed ---------------------------------


def observed(html: str, **options) -> Observation:
    async def body(page):
        return await observe(page, **options)

    return with_page(body, html=html)


def test_data_bbox_rounds_the_edges_then_subtracts():
    # left 10.4, width 20.4 (right 30.8), top 5.4, height 7.3 (bottom 12.7): width 31 - 10, height 13 - 5;
    # rounding the width and height themselves gives 20 and 7.
    obs = observed(
        '<body style="margin:0"><span style="position:absolute; left:10.4px; top:5.4px; width:20.4px;'
        ' height:7.3px; display:block; font-size:4px">box</span></body>'
    )
    assert '<span data-text="box" data-bbox="10,5,21,8"> box </span>' in obs.text


def test_quotes_and_angle_brackets_are_printed_raw_unless_escaped():
    page = '<button title="a &quot;b&quot;">Say "hi" &lt;now&gt;</button>'
    assert '<button id="0" title="a "b"" data-text="Say "hi" <now>"' in observed(page).text
    assert '> Say "hi" <now> </button>' in observed(page).text
    escaped = observed(page, escape=True).text
    assert '<button id="0" title="a &quot;b&quot;" data-text="Say &quot;hi&quot; &lt;now&gt;"' in escaped
    assert '> Say "hi" &lt;now&gt; </button>' in escaped


def test_data_text_collapses_runs_of_whitespace_including_no_break_spaces():
    obs = observed("<p>Price:&nbsp;&nbsp;5 &nbsp;each</p>")
    # data-text: each run of 2+ (U+00A0 counts) is one space; the printed text keeps what lxml reads.
    assert '<p data-text="Price: 5 each"' in obs.text and "> Price:\xa0\xa05 \xa0each </p>" in obs.text


def test_jsaction_rules_are_parsed():
    obs = observed(
        '<div jsaction="ns.open">Bare rule</div> <div jsaction="click:none.x">No namespace</div>'
        '<div jsaction="mouseover:ns.over; keydown:ns.key">Other events</div>'
        '<div jsaction="click:ns">No method</div> <div jsaction=" focus:a.b ;click:ns.go">Second rule</div>'
        "<button>After</button>"
    )
    assert element_id(obs, "Bare rule") == 0 and element_id(obs, "Second rule") == 1 and element_id(obs, "After") == 2
    for text in ("No namespace", "Other events", "No method"):
        assert f'<div data-text="{text}"' in obs.text
    assert obs.ids == [0, 1, 2]


def test_clickable_rules_as_vab_writes_them():
    obs = observed(
        "<style>body { margin: 0; font: 16px sans-serif } .zoom { cursor: zoom-in } a { cursor: auto }</style>"
        '<div contenteditable="plaintext-only">Plain text only</div> <div contenteditable="">Editable</div>'
        '<img usemap="#nowhere" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20" alt="no map">'
        '<img class="zoom" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20" alt="css zoom">'
        '<div style="width: 150px; position: relative">Some words then <a href="#l">a link over two lines</a>'
        '<div style="position: absolute; top: 0; left: 0; width: 150px; height: 18px; background: white"></div></div>'
        "<button>Last</button>"
    )
    # Only the editable div, the link (its second line is uncovered) and the button are interactive: VAB wants
    # contenteditable "", "true" or "contenteditable", an existing <map>, an inline zoom cursor.
    assert element_id(obs, "Editable") == 0 and element_id(obs, "a link over two lines") == 1
    assert element_id(obs, "Last") == 2 and obs.ids == [0, 1, 2]


def test_a_page_without_a_charset_reads_as_latin_1():
    page = "<p>Café – ok</p>"
    assert '<p data-text="CafÃ© â\x80\x93 ok"' in observed(page).text
    declared = observed('<meta charset="utf-8">' + page).text
    assert '<p data-text="Café – ok"' in declared


WRAPPED_LINK = """<body style="margin:0; font:16px sans-serif">
<div id="text" style="width:200px; line-height:40px">Some words before <a id="link" href="#followed">a link that
wraps over two lines</a> after</div>
<script>document.addEventListener("click", (e) => { window.clicked = e.target.id; });</script></body>"""


@pytest.mark.parametrize(("options", "target"), [({}, "text"), ({"click_at": "line"}, "link")])
def test_click_lands_at_the_bounding_box_centre_or_on_the_first_line(options, target):
    async def body(page):
        obs = await observe(page, **options)
        await execute(Action("click", element=0, text="x"), page, obs, **options)
        return obs, await page.evaluate("() => [window.clicked, location.hash]")

    obs, (clicked, url_hash) = with_page(body, html=WRAPPED_LINK)
    assert obs.ids == [0]
    # VAB: the centre of the link's box falls between its two lines, on the text around it; webrl: on its first line.
    assert clicked == target and url_hash == ("#followed" if target == "link" else "")


# -- WebArena accessibility tree -----------------------------------------------------------------------


def test_axtree_on_the_shop(shop):
    async def body(page):
        first = await observe(page, "axtree")
        second = await observe(page, "axtree")
        link = next(line for line in first.text.splitlines() if "link 'Sports & Outdoors'" in line)
        element = int(re.search(r"\[(\d+)\]", link).group(1))
        await execute(Action("click", element=element, text="x", space="webarena"), page, first)
        await page.wait_for_load_state("load")
        return first, second, page.url

    obs, again, url = with_page(body, url=shop)
    lines = obs.text.split("\n")
    assert lines[0] == "Tab 0 (current): One Stop Market" and lines[1] == ""
    assert obs.kind == "axtree" and obs.text == again.text and obs.ids == again.ids
    assert re.fullmatch(r"\[\d+\] RootWebArea 'One Stop Market' focused: True url: .*", lines[2])
    for line in lines[3:]:
        assert re.fullmatch(r"\t+\[\d+\] [\w]+ (?:'.*'|\".*\")(?: .+)?", line), line
    assert any(re.fullmatch(r"\t+\[\d+\] link 'Sign In' url: .*/customer/account/login/", line) for line in lines)
    assert not any(p in obs.text for p in ("focusable:", "editable:", "settable:", "level:"))
    assert set(obs.ids) == set(obs.boxes) and len(obs.ids) > 20
    assert url.endswith("/sports-outdoors.html")


def test_axtree_viewport_filter_and_quirk():
    async def body(page):
        return await observe(page, "axtree")

    obs = with_page(body, html=EDGE_CASES)
    assert "Far away link" not in obs.text and "Hidden button" not in obs.text and "ICON" not in obs.text
    assert "link 'Inner link'" in obs.text and "checkbox 'I agree' checked: true" in obs.text
    # WebArena's ratio is (overlap area / width) * height, not overlap / area.
    assert viewport_ratio((0, 700, 100, 40), 1280, 720) == pytest.approx(100 * 20 / 100 * 40)
    assert viewport_ratio((0, 800, 100, 40), 1280, 720) == 0
