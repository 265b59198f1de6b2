"""User-written text cannot add markup to a page. Hostile strings are posted through the real forms of the sites
that render Markdown (a GitLab issue comment, a Postmill comment) and read back from the served page: no element,
attribute or URL they try to inject reaches the DOM, and their text stays readable. An agent that could inject
markup could rewrite what the evaluators' program_html checks read."""

from __future__ import annotations

import httpx
import lxml.html
import pytest

from webrl.sites.markdown import gitlab_markdown, postmill_markdown

HOSTILE = [
    '![a](x"onerror="alert(1))',  # an attribute out of an image's src
    '[click](x" onmouseover="alert(1))',  # ... out of a link's href
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<iframe src=javascript:alert(1)></iframe>",
    '<a href="javascript:alert(1)">raw</a>',
    "`<b>code</b>` and **bold <i>x</i>**",
]
FORBIDDEN_TAGS = {"script", "iframe", "object", "embed", "style", "svg", "math", "form", "b", "i"}
UNSAFE_SCHEMES = ("javascript:", "vbscript:", "data:")


def injected(html: str) -> list[str]:
    """What in `html` came from markup in user text: forbidden elements, event-handler attributes, unsafe URLs."""
    found = []
    for element in lxml.html.fragment_fromstring(html, create_parent="div").iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag in FORBIDDEN_TAGS:
            found.append(f"<{element.tag}>")
        for name, value in element.attrib.items():
            if name.lower().startswith("on"):
                found.append(f"{element.tag}[{name}]")
            if name in ("href", "src") and value.strip().lower().startswith(UNSAFE_SCHEMES):
                found.append(f"{element.tag}[{name}={value}]")
    return found


@pytest.mark.parametrize(
    "render", [lambda text: gitlab_markdown(text, "/g/p/-/issues"), postmill_markdown], ids=["gitlab", "postmill"]
)
@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_renders_hostile_text_as_text(render, text):
    html = render(text)
    assert injected(html) == [], html
    assert "alert(1)" in html or "msgbox" in html or "code" in html or "base64" in html  # shown, not dropped


def test_gitlab_flavour_keeps_its_features():
    html = gitlab_markdown(
        "## Steps\n\n- [x] done :tada:\n- [ ] see #12\n\n~~old~~ [docs](https://x.org/a)\n\n```py\nprint(1)\n```",
        "/g/p/-/issues",
    )
    assert '<h2 id="steps">Steps</h2>' in html
    assert '<li class="task-list-item"><input type="checkbox" disabled checked> done \U0001f389</li>' in html
    assert '<a href="/g/p/-/issues/12" class="gfm gfm-issue">#12</a>' in html
    assert "<del>old</del>" in html and '<a href="https://x.org/a">docs</a>' in html
    assert '<pre class="code highlight"><code class="language-py">print(1)' in html
    assert "#12" in gitlab_markdown("see #12") and "<a" not in gitlab_markdown("see #12")  # no issue base: text


def test_postmill_flavour_links_bare_urls_without_follow():
    html = postmill_markdown("first line\nsee https://example.com/a?b=1 and [this](/f/books)")
    assert "first line<br />" in html
    assert '<a href="https://example.com/a?b=1" rel="nofollow">https://example.com/a?b=1</a>' in html
    assert '<a href="/f/books" rel="nofollow">this</a>' in html


def _post_comment_on_gitlab(client: httpx.Client, text: str, backend) -> list[str]:
    client.post("/users/sign_in", data={"user[login]": "byteblaze", "user[password]": "hello1234"})
    issue = "/byteblaze/a11y-syntax-highlighting/-/issues/1"
    assert client.post(issue + "/notes", data={"note[note]": text}).status_code == 303
    return _html_of(client.get(issue).text, "//*[@data-testid='note-text']")


def _post_comment_on_postmill(client: httpx.Client, text: str, backend) -> list[str]:
    client.post("/login", data={"_username": "MarvelsGrantMan136", "_password": "test1234"})
    forum, sid = backend.query(
        "reddit", "SELECT f.name, s.id FROM submissions s JOIN forums f ON f.id = s.forum_id ORDER BY s.id LIMIT 1"
    )[0]
    assert client.post(f"/f/{forum}/{sid}/-/comment", data={"comment": text}).status_code == 303
    return _html_of(client.get(f"/f/{forum}/{sid}").text, "//*[contains(concat(' ', @class, ' '), ' comment__body ')]")


def _html_of(page: str, xpath: str) -> list[str]:
    """The served HTML of the page's user-text elements (the page's own scripts are not user text)."""
    return [lxml.html.tostring(e, encoding="unicode") for e in lxml.html.fromstring(page).xpath(xpath)]


@pytest.mark.parametrize(("site", "post"), [("gitlab", _post_comment_on_gitlab), ("reddit", _post_comment_on_postmill)])
def test_hostile_comments_posted_through_the_forms_inject_nothing(site_servers, site, post):
    backend = site_servers(site)
    try:
        with httpx.Client(base_url=backend.urls(0)[site], timeout=15) as client:
            comments = post(client, "\n\n".join(HOSTILE), backend)
        hostile = [html for html in comments if "alert(1)" in html]
        assert len(hostile) == 1, comments
        assert injected(hostile[0]) == [], hostile[0]
    finally:
        backend.reset()
