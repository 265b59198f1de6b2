"""The ORM prompt, byte for byte, and its truncation: only the page is cut, token-exact, never the question or the
assistant header (the official code cuts the prompt's end, header included)."""

from __future__ import annotations

import pytest

from webrl.orm.format import PromptTooLong, history_lines, orm_input_ids, orm_prompt, prompt_parts
from webrl.policy.models import load_tokenizer

INTENT = "What is the price of the blue mug?"
RESPONSES = [
    '# Element: the search box\ndo(action="Search", argument="blue mug", element="4")',
    '# Note: the mug costs $12.50\nexit(message="$12.50")',
]
HTML = '<html> <body> <span id="3" data-text="Blue mug" data-bbox="10,20,80,16"> $12.50 </span> </body> </html>'

GOLDEN = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
    "You are an expert judge of a web navigation agent's work. You are shown what the user asked for, the actions "
    "the agent took, and the state of the web page at the end. Decide whether the agent carried out the user's "
    "request successfully. Answer YES if it did and NO if it did not."
    "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
    "The User Intent:\nWhat is the price of the blue mug?\n\n"
    "Action History:\n"
    '# Element: the search box; do(action="Search", argument="blue mug", element="4")\n'
    '# Note: the mug costs $12.50; exit(message="$12.50")\n\n'
    "The Current Screenshot:\n"
    '<html> <body> <span id="3" data-text="Blue mug" data-bbox="10,20,80,16"> $12.50 </span> </body> </html>'
    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
)
ASSISTANT_HEADER = "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"


@pytest.fixture(scope="module")
def tokenizer(tiny):
    return load_tokenizer(tiny)


def test_prompt_bytes_match_the_reference_layout():
    assert orm_prompt(INTENT, RESPONSES, HTML) == GOLDEN
    assert "".join(prompt_parts(INTENT, RESPONSES, HTML)) == GOLDEN
    assert history_lines(["a\nb\nc", "d"]) == "a; b; c\nd"  # one line per step


def test_uncut_ids_are_the_prompt_tokens(tokenizer):
    ids = orm_input_ids(tokenizer, INTENT, RESPONSES, HTML, max_tokens=16384)
    assert tokenizer.decode(ids) == GOLDEN
    assert ids.count(tokenizer.bos_token_id) == 1 and ids[0] == tokenizer.bos_token_id  # the prompt's own BOS only
    assert ids == tokenizer(GOLDEN, add_special_tokens=False).input_ids  # the pieces split cleanly here


def test_long_page_is_cut_and_the_question_and_header_survive(tokenizer):
    page = HTML.replace("$12.50", "$12.50 " + "<div> filler text </div> " * 400)
    head, html, tail = (
        tokenizer(part, add_special_tokens=False).input_ids for part in prompt_parts(INTENT, RESPONSES, page)
    )
    limit = len(head) + len(tail) + 50
    ids = orm_input_ids(tokenizer, INTENT, RESPONSES, page, max_tokens=limit)
    assert len(ids) == limit < len(head) + len(html) + len(tail)
    assert ids[: len(head)] == head and ids[-len(tail) :] == tail and ids[len(head) : -len(tail)] == html[:50]
    text = tokenizer.decode(ids)
    assert text.endswith(ASSISTANT_HEADER) and f"The User Intent:\n{INTENT}\n\n" in text
    assert 'exit(message="$12.50")\n\nThe Current Screenshot:\n<html> <body>' in text
    assert "</html>" not in text  # the page's end is what goes


def test_limits_at_the_edges(tokenizer):
    head, html, tail = (
        tokenizer(part, add_special_tokens=False).input_ids for part in prompt_parts(INTENT, RESPONSES, HTML)
    )
    full = len(head) + len(html) + len(tail)
    assert len(orm_input_ids(tokenizer, INTENT, RESPONSES, HTML, full)) == full
    assert orm_input_ids(tokenizer, INTENT, RESPONSES, HTML, full - 1)[-len(tail) - 1] == html[-2]
    assert orm_input_ids(tokenizer, INTENT, RESPONSES, HTML, len(head) + len(tail)) == head + tail  # no page left
    with pytest.raises(PromptTooLong, match="before any page"):
        orm_input_ids(tokenizer, INTENT, RESPONSES, HTML, len(head) + len(tail) - 1)
