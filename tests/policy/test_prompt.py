"""Golden tests of the prompt formats: the WebRL completion prompt byte for byte, and the chat form."""

from __future__ import annotations

from webrl.policy.prompt import (
    HTML_PLACEHOLDER,
    PROMPT_CHAR_LIMIT,
    SYSTEM_PROMPT,
    chat_messages,
    webrl_history,
    webrl_prompt,
)

INTENT = "What is the price of the cheapest socks?"
HTML = '<html> <a id="0" data-text="Socks"> Socks </a> </html>'
R0 = '# Element: the search box\ndo(action="Search", argument="socks", element="6")'
R1 = 'do(action="Click", element="12")'
R2 = '# Note: $4.99 is the lowest price\ndo(action="Scroll Down")'


def test_round_0():
    assert webrl_prompt(INTENT, [], HTML) == (
        "Task Instruction: What is the price of the cheapest socks?\n\n"
        "Round 0\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        '<html> <a id="0" data-text="Socks"> Socks </a> </html>\n\n'
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    )


def test_round_1():
    assert webrl_prompt(INTENT, [R0], HTML) == (
        "Task Instruction: What is the price of the cheapest socks?\n\n"
        "Round 0\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "What is the price of the cheapest socks?\n\n"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        '# Element: the search box\ndo(action="Search", argument="socks", element="6")\n\n'
        "Round 1\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        '<html> <a id="0" data-text="Socks"> Socks </a> </html>\n\n'
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    )


def test_round_3():
    assert webrl_prompt(INTENT, [R0, R1, R2], HTML) == (
        "Task Instruction: What is the price of the cheapest socks?\n\n"
        "Round 0\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "What is the price of the cheapest socks?\n\n"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        '# Element: the search box\ndo(action="Search", argument="socks", element="6")\n\n'
        "Round 1\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "** Simplified html **\n\n"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        'do(action="Click", element="12")\n\n'
        "Round 2\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "** Simplified html **\n\n"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        '# Note: $4.99 is the lowest price\ndo(action="Scroll Down")\n\n'
        "Round 3\n\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        '<html> <a id="0" data-text="Socks"> Socks </a> </html>\n\n'
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    )


def test_truncation_counts_the_past_rounds():
    history = ["a" * 100]
    past = webrl_history("T", history)
    assert past == (
        "Round 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\nT\n\n"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n" + "a" * 100 + "\n\n"
    )
    assert len(past) == 221 and PROMPT_CHAR_LIMIT == 15872
    # Exactly at the limit: untouched. Longer: cut to 15872 - 221 = 15651 characters.
    fits = "x" * (15872 - 221)
    assert webrl_prompt("T", history, fits).count("x") == 15651
    html = "<p>" + "y" * 20_000 + "</p>"
    assert webrl_prompt("T", history, html) == (
        "Task Instruction: T\n\n"
        "Round 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\nT\n\n"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n" + "a" * 100 + "\n\n"
        "Round 1\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "<p>" + "y" * 15648 + "\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    )
    # Round 0: no history, the HTML alone is capped at 15872 characters.
    assert webrl_prompt("T", [], "z" * 16_000) == (
        "Task Instruction: T\n\nRound 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        + "z" * 15872
        + "\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    )


def test_truncation_with_an_overlong_history_slices_like_python():
    # VAB computes html[:15872 - len(history)]; a negative bound drops that many characters from the end.
    history = ["b" * 16_000]
    over = len(webrl_history("T", history)) - 15872
    prompt = webrl_prompt("T", history, "0123456789" + "c" * 1000)
    assert ("0123456789" + "c" * 1000)[:-over] in prompt and "c" * (1000 - over + 1) not in prompt


def test_chat_messages():
    assert chat_messages(INTENT, [], HTML) == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "Task Instruction: What is the price of the cheapest socks?\n\n" + HTML},
    ]
    assert chat_messages(INTENT, [R0, R1], HTML) == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": "Task Instruction: What is the price of the cheapest socks?\n\n** Simplified html **",
        },
        {"role": "assistant", "content": R0},
        {"role": "user", "content": "** Simplified html **"},
        {"role": "assistant", "content": R1},
        {"role": "user", "content": HTML},
    ]
    for action in (
        'do(action="Click", element=',
        '"Select Dropdown Option"',
        'do(action="Go Backward")',
        "exit(message=",
        '"Search"',
        '"Type"',
        '"Hover"',
        '"Press Enter"',
        '"Scroll Up"',
        "# Element:",
    ):
        assert action in SYSTEM_PROMPT
    assert HTML_PLACEHOLDER in SYSTEM_PROMPT


def test_chat_messages_truncation():
    long_html = "h" * 20_000
    messages = chat_messages("T", [], long_html)
    assert messages[1]["content"] == "Task Instruction: T\n\n" + "h" * (15872 - len("Task Instruction: T\n\n"))
    messages = chat_messages("T", ["r" * 15_000, "s" * 2_000], long_html)
    assert messages[-1] == {"role": "user", "content": ""}  # never a negative cut
    messages = chat_messages("T", ["r" * 100], long_html)
    fixed = len("Task Instruction: T\n\n** Simplified html **") + 100
    assert messages[-1]["content"] == "h" * (15872 - fixed)
