"""The action parsers (table-driven, both spaces) and execution on the real embedded shop in Chromium."""

from __future__ import annotations

import contextlib
import re

import pytest
from env_support import with_page  # tests/env is on sys.path (no __init__.py)

from webrl.env.actions import Action, ActionError, execute, parse_action
from webrl.env.observation import Observation, observe

# -- webrl syntax ------------------------------------------------------------------------------------

# (model output, kind, element, argument, text the action was parsed from)
WEBRL_OK = [
    ('do(action="Click", element="2")', "click", 2, None, 'do(action="Click", element="2")'),
    (
        '# Element: the \'Sales\' menu item\ndo(action="Click", element="2")',
        "click",
        2,
        None,
        'do(action="Click", element="2")',
    ),
    (
        "# Element: the search box\n# Note: 3 results\ndo(action='Search', argument='red shoes', element='5')",
        "search",
        5,
        "red shoes",
        "do(action='Search', argument='red shoes', element='5')",
    ),
    ('do(action="click", element=7)', "click", 7, None, 'do(action="click", element=7)'),
    ('do(action="CLICK", element=" 7 ")', "click", 7, None, 'do(action="CLICK", element=" 7 ")'),
    (
        'do(action="Type", argument="Say \\"hi\\", it\'s me", element="3")',
        "type",
        3,
        'Say "hi", it\'s me',
        'do(action="Type", argument="Say \\"hi\\", it\'s me", element="3")',
    ),
    (
        'do(action="Type", argument="line1\\nline2", element="3")',
        "type",
        3,
        "line1\nline2",
        'do(action="Type", argument="line1\\nline2", element="3")',
    ),
    ('do(action="Type", argument="", element="3")', "type", 3, "", 'do(action="Type", argument="", element="3")'),
    ('do(action="Hover", element="11")', "hover", 11, None, 'do(action="Hover", element="11")'),
    (
        'do(action="Select Dropdown Option", argument="Price", element="9")',
        "select",
        9,
        "Price",
        'do(action="Select Dropdown Option", argument="Price", element="9")',
    ),
    ('do(action="Scroll Down")', "scroll_down", None, None, 'do(action="Scroll Down")'),
    ('do(action="scroll up", element="4")', "scroll_up", None, None, 'do(action="scroll up", element="4")'),
    ('do(action="Press Enter")', "press_enter", None, None, 'do(action="Press Enter")'),
    ('do(action="Go Backward")', "go_backward", None, None, 'do(action="Go Backward")'),
    ('do(action="Go forward")', "go_forward", None, None, 'do(action="Go forward")'),
    ('exit(message="The total is $42.00")', "exit", None, "The total is $42.00", 'exit(message="The total is $42.00")'),
    ("# Note: nothing to report\nexit(message='')", "exit", None, "", "exit(message='')"),
    ("exit()", "exit", None, "", "exit()"),
    ("exit(message=12)", "exit", None, "12", "exit(message=12)"),
    # Several calls: the last do( wins; exit( is looked for first, so it wins over any do(.
    (
        'do(action="Click", element="1")\ndo(action="Click", element="2")',
        "click",
        2,
        None,
        'do(action="Click", element="2")',
    ),
    ('do(action="Click", element="1")\nexit(message="done")', "exit", None, "done", 'exit(message="done")'),
    ('Thought: the link.\ndo(action="Click", element="8")  ', "click", 8, None, 'do(action="Click", element="8")'),
]


@pytest.mark.parametrize(("output", "kind", "element", "argument", "text"), WEBRL_OK)
def test_parse_webrl(output, kind, element, argument, text):
    action = parse_action(output)
    assert (action.kind, action.element, action.argument, action.text, action.error) == (
        kind,
        element,
        argument,
        text,
        None,
    )
    assert action.space == "webrl"


# (model output, a fragment of the reason)
WEBRL_NONE = [
    ("", "no action"),
    ("   \n", "no action"),
    ("I will click the button.", "not a single Python call"),
    ("# Element: the button\n# Note: nothing", "no action"),
    ('do(action="Click"', "not a single Python call"),
    ('do(action="Click", element="2"', "not a single Python call"),
    ('do(action="Click", element="2")\nBecause it is the right one.', "not a single Python call"),
    ('do("Click", "2")', "keyword arguments only"),
    ('do(element="2")', "needs action"),
    ('do(action="Click")', "needs element"),
    ('do(action="Click", element="two")', "not an element id"),
    ('do(action="Click", element="-1")', "not an element id"),
    ('do(action="Click", element=True)', "not an element id"),
    ('do(action="Type", element="3")', "needs argument"),
    ('do(action="Search", argument=None, element="3")', "needs argument"),
    ('do(action="Right Click", element="3")', "not supported"),
    ('do(action="Switch Tab", element="1")', "not supported"),
    ('do(action="Wait")', "not supported"),
    ('do(action="Fly", element="1")', "unknown action"),
    ("go_backward()", "bare go_backward()"),
    ("go_forward()", "bare go_forward()"),  # not a key: the whole text is parsed, and is no do()/exit()
    ('do(action="Click", element=find_element_by_instruction(instruction="the logo"))', "find_element_by_instruction"),
    ('do(action="Click", element=x)', "literal"),
    ('do(action="Click", **{"element": "2"})', "**kwargs"),
    ("do", "expected a call"),
    ("print('do(')", "not a single Python call"),
    ('do(action="Type", argument="exit(now)", element="3")', "not a single Python call"),  # VAB's key order
    ("\x00\x01 garbage ))) do(((", "not a single Python call"),
]


@pytest.mark.parametrize(("output", "reason"), WEBRL_NONE)
def test_parse_webrl_failures(output, reason):
    action = parse_action(output)
    assert action.kind == "none" and action.element is None and action.argument is None
    assert reason in action.error, action.error


def test_parse_never_raises():
    for garbage in (None, 3, b"do(", "do(" * 1000, "(" * 500, "exit(message=" + '"' * 3, "\ud800"):
        assert parse_action(garbage).kind == "none"
    assert parse_action('do(action="Click", element="1")', space="nope").error == "unknown action space 'nope'"


def test_go_forward_bare_is_no_go():
    # go_forward( is not one of the keys; with a do( elsewhere, the do( is what gets parsed.
    assert parse_action('go_forward()\ndo(action="Go Forward")').kind == "go_forward"


# -- webarena syntax ---------------------------------------------------------------------------------

WEBARENA = [
    ("click [12]", "click", 12, None),
    ("hover [3]", "hover", 3, None),
    ("type [5] [red shoes] [0]", "type", 5, "red shoes"),
    ("type [5] [red shoes] [1]", "type", 5, "red shoes\n"),
    ("type [5] [red shoes]", "type", 5, "red shoes\n"),
    ("type [5] [a [b] c]", "type", 5, "a [b] c\n"),
    ("press [Ctrl+a]", "press", None, "Ctrl+a"),
    ("scroll [down]", "scroll_down", None, None),
    ("scroll [up]", "scroll_up", None, None),
    ("goto [http://example.com/a?b=1]", "goto", None, "http://example.com/a?b=1"),
    ("new_tab", "new_tab", None, None),
    ("tab_focus [1]", "tab_focus", None, "1"),
    ("close_tab", "close_tab", None, None),
    ("go_back", "go_backward", None, None),
    ("go_forward", "go_forward", None, None),
    ("stop [$25.99]", "stop", None, "$25.99"),
    ("stop [N/A]", "stop", None, "N/A"),
    ("stop []", "stop", None, ""),
    ("stop", "stop", None, ""),
    (
        "Let's think step by step. The button is [7]. In summary, the next action I will perform is ```click [7]```",
        "click",
        7,
        None,
    ),
    (
        "```scroll [down]``` no wait. In summary, the next action I will perform is ```type [4] [hello] [0]```",
        "type",
        4,
        "hello",
    ),
    ("The answer:\n```\nstop [Yes]\n```", "stop", None, "Yes"),
]


@pytest.mark.parametrize(("output", "kind", "element", "argument"), WEBARENA)
def test_parse_webarena(output, kind, element, argument):
    action = parse_action(output, space="webarena")
    assert (action.kind, action.element, action.argument, action.error) == (kind, element, argument, None)
    assert action.space == "webarena" and action.text


@pytest.mark.parametrize(
    "output",
    [
        "",
        "click",
        "click [abc]",
        "type [5]",
        "scroll [left]",
        "fly [1]",
        "press",
        "goto",
        "tab_focus [x]",
        'do(action="Click", element="1")',
    ],
)
def test_parse_webarena_failures(output):
    action = parse_action(output, space="webarena")
    assert action.kind == "none" and action.error


# -- execution on the shop ---------------------------------------------------------------------------


def labelled(obs: Observation, pattern: str) -> int:
    """The id of the first labelled element whose opening tag and text match `pattern`."""
    for match in re.finditer(r'<(\w+) id="(\d+)"([^>]*)>([^<]*)', obs.text):
        if re.search(pattern, match.group(0)):
            return int(match.group(2))
    raise AssertionError(f"no element matching {pattern!r}")


async def step(page, text: str, space: str = "webrl"):
    obs = await observe(page, "webrl" if space == "webrl" else "axtree")
    action = parse_action(text, space)
    assert action.kind != "none", action.error
    return await execute(action, page, obs)


def test_type_search_and_go_backward(shop):
    async def body(page):
        obs = await observe(page)
        box = labelled(obs, r'placeholder="Search entire store')
        await step(page, f'do(action="Type", argument="wrong words", element="{box}")')
        await step(page, f'do(action="Type", argument="socks", element="{box}")')  # replaces, no Enter
        typed = await page.input_value("#search"), page.url
        await step(page, f'# Element: the search box\ndo(action="Search", argument="crew socks", element="{box}")')
        searched = page.url, await observe(page)
        await step(page, 'do(action="Go Backward")')
        back = page.url
        await step(page, 'do(action="Go Forward")')
        return typed, searched, back, page.url

    (value, url_after_type), (search_url, results), back, forward = with_page(body, url=shop)
    assert value == "socks" and url_after_type.rstrip("/") == shop.rstrip("/")
    assert "/catalogsearch/result/" in search_url and "q=crew+socks" in search_url
    assert 'value="crew socks"' in results.text  # the results page shows the query in the box
    assert back.rstrip("/") == shop.rstrip("/") and forward == search_url


def test_select_dropdown_option_and_press_enter(shop):
    async def body(page):
        await page.goto(shop.rstrip("/") + "/sports-outdoors.html")
        obs = await observe(page)
        sorter = labelled(obs, r'<select id="\d+"[^>]*data-text="(Position|Relevance)"')
        await step(page, f'do(action="Select Dropdown Option", argument="price", element="{sorter}")')
        sorted_url = page.url
        obs = await observe(page)
        with pytest.raises(ActionError, match="no option contains"):
            sorter = labelled(obs, r"<select ")
            await execute(
                parse_action(f'do(action="Select Dropdown Option", argument="zzz", element="{sorter}")'), page, obs
            )
        box = labelled(obs, r'placeholder="Search entire store')
        await step(page, f'do(action="Type", argument="tent", element="{box}")')
        await step(page, 'do(action="Press Enter")')
        return sorted_url, page.url

    sorted_url, entered_url = with_page(body, url=shop)
    assert "product_list_order=price" in sorted_url
    assert "/catalogsearch/result/" in entered_url and "q=tent" in entered_url


def test_scroll_hover_and_unknown_element(shop):
    async def body(page):
        scrolls = []
        await step(page, 'do(action="Scroll Down")')
        scrolls.append(await page.evaluate("window.scrollY"))
        await step(page, 'do(action="Scroll Down")')
        scrolls.append(await page.evaluate("window.scrollY"))
        await step(page, 'do(action="Scroll Up")')
        scrolls.append(await page.evaluate("window.scrollY"))
        obs = await observe(page)
        await step(page, f'do(action="Hover", element="{obs.ids[0]}")')
        with pytest.raises(ActionError, match="element 999 is not on the page"):
            await execute(parse_action('do(action="Click", element="999")'), page, obs)
        assert await execute(parse_action("nonsense"), page, obs) is None  # none: a no-op
        assert await execute(parse_action('exit(message="x")'), page, obs) is None
        return scrolls

    down1, down2, up = with_page(body, url=shop)
    assert down1 == pytest.approx(480, abs=2) and down2 == pytest.approx(960, abs=2) and up == pytest.approx(480, abs=2)


def test_click_point_is_the_centre_of_playwrights_bounding_box(shop, site_servers):
    """Click and Select land at the centre of the element's box measured in one evaluate; Playwright's
    ElementHandle.bounding_box (DOM.getBoxModel's border quad), which the click used before, has the same centre for
    every labelled element: links (some wrapped over two lines), inputs, a select, and the map's SVG shapes, whose
    quad adds the stroke on every side (their centres agree to float32 rounding, ~3e-5 px)."""
    from webrl.env.actions import _click_point

    map_url = site_servers("map").urls(0)["map"]

    async def body(page):
        compared, svg, differing, exact = 0, 0, 0, 0
        for url in (shop, shop.rstrip("/") + "/electronics.html", map_url.rstrip("/") + "/directions"):
            await page.goto(url)
            obs = await observe(page)
            for element in obs.ids:
                handle = await page.query_selector(f'[data-label-id="{element}"]')
                box = await handle.bounding_box()
                svg += await handle.evaluate("e => e instanceof SVGElement")
                await handle.dispose()
                point = await _click_point(Action("click", element=element), page, obs, "box")
                assert point == pytest.approx((box["x"] + box["width"] / 2, box["y"] + box["height"] / 2), abs=1e-3), (
                    url,
                    element,
                )
                exact += point == (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                compared += 1
                rect = obs.boxes[element]
                differing += (round(box["width"]), round(box["height"])) != (rect[2], rect[3])
        return compared, svg, differing, exact

    compared, svg, differing, exact = with_page(body, url=shop)
    assert compared > 200 and svg > 20 and differing > 0, (compared, svg, differing)
    assert exact >= compared - svg  # the HTML elements' to the bit; an SVG shape's within float32 rounding


def test_webarena_actions(shop):
    async def body(page):
        obs = await observe(page, "axtree")
        box = int(re.search(r"\[(\d+)\] textbox 'Search'", obs.text).group(1))
        await step(page, "scroll [down]", "webarena")
        scrolled = await page.evaluate("window.scrollY")
        await step(page, "scroll [up]", "webarena")
        await step(page, f"In summary, the next action I will perform is ```type [{box}] [crew socks]```", "webarena")
        searched = page.url
        await step(page, "go_back", "webarena")
        back = page.url
        await step(page, f"goto [{shop.rstrip('/')}/electronics.html]", "webarena")
        went = page.url
        new = await step(page, "new_tab", "webarena")
        focused = await execute(parse_action("tab_focus [0]", "webarena"), new, await observe(new, "axtree"))
        header = (await observe(focused, "axtree")).text.split("\n")[0]
        current = await execute(parse_action("close_tab", "webarena"), focused, None)
        return searched, scrolled, back, went, header, current is new

    searched, scrolled, back, went, header, kept_new = with_page(body, url=shop)
    assert "q=crew+socks" in searched
    assert scrolled == 720  # one window height
    assert back.rstrip("/") == shop.rstrip("/") and went.endswith("/electronics.html")
    assert header.startswith("Tab 0 (current): ") and " | Tab 1: " in header
    assert kept_new


def test_action_is_frozen():
    action = Action("click", element=1, text="x")
    with pytest.raises(AttributeError):
        action.kind = "type"  # type: ignore[misc]


def test_typing_is_one_insert_only_where_nothing_listens_to_keys():
    """Type and Search insert their text in one go where no key, input or composition listener is on the events'
    path (field, ancestors, document, window) of a plain text field, and type key by key everywhere else."""
    from webrl.env.actions import _listens_to_typing, _type

    fields = """<div id="wrap"><input id="plain"><input id="onkey" onkeyup="1"><textarea id="area"></textarea>
        <input id="delegated"><input id="number" type="number"><div id="editable" contenteditable></div></div>"""

    async def body(page):
        cdp = await page.context.new_cdp_session(page)
        asked = {}
        for field, setup in [
            ("plain", None),
            ("area", None),
            ("onkey", None),
            ("number", None),
            ("editable", None),
            ("plain", "document.addEventListener('keydown', () => {})"),
            ("area", "document.getElementById('wrap').addEventListener('input', () => {})"),
            ("delegated", "window.addEventListener('compositionstart', () => {})"),
        ]:
            await page.set_content(fields)  # a new document: no listener of an earlier case
            if setup:
                await page.evaluate(f"() => {{ {setup}; }}")
            await page.focus(f"#{field}")
            asked[(field, setup is not None)] = await _listens_to_typing(cdp)
        await page.set_content(fields)
        values = []
        for field in ("plain", "onkey"):
            await page.focus(f"#{field}")
            await _type(page, "yoga mat ü", cdp)
            values.append(await page.input_value(f"#{field}"))
        return asked, values

    asked, values = with_page(body)
    assert asked == {
        ("plain", False): False,
        ("area", False): False,
        ("onkey", False): True,
        ("number", False): True,
        ("editable", False): True,
        ("plain", True): True,
        ("area", True): True,
        ("delegated", True): True,
    }
    assert values == ["yoga mat ü", "yoga mat ü"]


def test_a_cancellation_that_lands_as_the_page_answers_is_not_lost():
    """Ctrl-C cancels the run's task. If it lands while the step's two-frame wait has just been answered, the
    cancellation must still end the step: with Python 3.11's asyncio.wait_for it was lost, and an interrupted
    `webrl eval` ran to the end and exited 0. A stand-in page, since the race needs the answer and the cancel in
    chosen event-loop iterations, which a real browser cannot be made to keep."""
    import asyncio

    from webrl.env.actions import _quiet

    class PageThatAnswersNextIteration:
        async def evaluate(self, script):
            await asyncio.sleep(0)

    async def cancel_after(iterations: int) -> tuple[bool, bool]:
        task = asyncio.create_task(_quiet(PageThatAnswersNextIteration()))
        for _ in range(iterations):
            await asyncio.sleep(0)
        requested = task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return requested, task.cancelled()

    outcomes = [asyncio.run(cancel_after(k)) for k in range(6)]
    assert any(requested for requested, _ in outcomes) and any(not requested for requested, _ in outcomes)
    assert all(cancelled for requested, cancelled in outcomes if requested), outcomes
