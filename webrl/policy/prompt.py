"""Prompt formats: the one place where prompts are built.

`webrl_prompt` is the completion prompt of the released WebRL checkpoints, byte for byte as VAB's WebRL
prompt constructor builds it: no system prompt, hard-coded Llama-3 header tokens, one "Round k" block
per step. Past rounds show the task intent (round 0) or the placeholder `** Simplified html **` in the
user slot and the raw past response (comment lines included) in the assistant slot; the current round
shows the current simplified HTML and an open assistant header.

Truncation is by characters. "History" is the text of the past round blocks, exactly as they appear
in the prompt (from "Round 0" up to the current round's "Round t"; the "Task Instruction: ..." line and
the current round's own framing are not counted). When len(history) + len(html) > 16384 - 512, the HTML
becomes html[:15872 - len(history)]. This is Python slicing, as in VAB: if the history alone is longer
than 15872 characters the bound is negative and the slice drops that many characters from the end of
the HTML rather than emptying it (kept for fidelity; it needs a ~60-round history of long responses).
A model's token budget cuts the same way, the page's end (`prompt_token_ids`: training and local inference).

`chat_messages` is the same content for chat/instruct models (API models): a system prompt describing
the action functions, then user/assistant turns.

A task family may show the policy another task instruction in a mode of its own (TaskFamily.shown_intent: the
WebArena-Verified family's asks for its structured response); the prompt itself is the same.
"""

from __future__ import annotations

HTML_PLACEHOLDER = "** Simplified html **"
PROMPT_CHAR_LIMIT = 16384 - 512  # history + current HTML, in characters
END_OF_TURN = "<|eot_id|>"  # ends every response: the stop string when sampling, appended when training

_USER = f"{END_OF_TURN}<|start_header_id|>user<|end_header_id|>\n"
_ASSISTANT = f"{END_OF_TURN}<|start_header_id|>assistant<|end_header_id|>\n"


def _past_round(index: int, user: str, response: str) -> str:
    return f"Round {index}\n\n{_USER}{user}\n\n{_ASSISTANT}{response}\n\n"


def webrl_history(intent: str, history: list[str]) -> str:
    """The past round blocks of `webrl_prompt` (what the character limit counts as history)."""
    return "".join(
        _past_round(i, intent if i == 0 else HTML_PLACEHOLDER, response) for i, response in enumerate(history)
    )


def _split(prompt: str) -> tuple[str, str, str] | None:
    """A `webrl_prompt` as (everything before the current page, the page, the open assistant header after it);
    None for a prompt not in that layout."""
    head, user, rest = prompt.rpartition(_USER)
    page, assistant, after = rest.rpartition("\n\n" + _ASSISTANT)
    if user and assistant and not after:
        return head + user, page, assistant
    return None


def prompt_page(prompt: str) -> str:
    """The current page a `webrl_prompt` shows (the whole prompt when it is not in that layout)."""
    parts = _split(prompt)
    return prompt if parts is None else parts[1]


def prompt_token_ids(tokenizer, prompt: str, max_tokens: int) -> tuple[list[int], int]:
    """The prompt's token ids (special tokens added: BOS), at most `max_tokens`, and how many were cut.

    A prompt that fits is tokenized whole. One that does not loses the end of its current page, as the
    character limit above cuts it, so the task instruction, the history and the open assistant header always
    survive (cutting from the left would drop the instruction first, and a model trained on such prompts never
    sees its task). Head, page and tail are then tokenized apart, so the cut is exact in tokens. A prompt not in
    `webrl_prompt`'s layout, or whose head and tail alone do not fit, loses tokens from its left (BOS kept)."""
    ids = tokenizer(prompt).input_ids
    if len(ids) <= max_tokens:
        return ids, 0
    parts = _split(prompt)
    if parts is not None:
        head, page, tail = parts
        head_ids = tokenizer(head).input_ids
        tail_ids = tokenizer(tail, add_special_tokens=False).input_ids
        room = max_tokens - len(head_ids) - len(tail_ids)
        if room >= 0:
            kept = head_ids + tokenizer(page, add_special_tokens=False).input_ids[:room] + tail_ids
            return kept, len(ids) - len(kept)
    bos = ids[:1] if tokenizer.bos_token_id is not None and ids[0] == tokenizer.bos_token_id else []
    keep = max_tokens - len(bos)
    kept = bos + (ids[len(ids) - keep :] if keep > 0 else [])
    return kept, len(ids) - len(kept)


def webrl_prompt(intent: str, history: list[str], html: str) -> str:
    """The WebRL completion prompt for step len(history): `history` holds the raw past responses."""
    past = webrl_history(intent, history)
    if len(past) + len(html) > PROMPT_CHAR_LIMIT:
        html = html[: PROMPT_CHAR_LIMIT - len(past)]
    current = f"Round {len(history)}\n\n{_USER}{html}\n\n{_ASSISTANT}"
    return f"Task Instruction: {intent}\n\n{past}{current}"


SYSTEM_PROMPT = """\
You control a web browser to carry out a task for a user. Each turn shows you the visible part of the \
current page as simplified HTML. Elements you can act on carry an id attribute, e.g. \
<button id="7" data-text="Search"> Search </button>; data-bbox gives an element's position on screen as \
x,y,width,height. Earlier pages are not shown again: they are replaced by "** Simplified html **".

Answer with one action per turn. You may first write comment lines starting with "#", such as \
"# Element: the search box at the top" to say which element you mean, or "# Note: ..." to keep \
information from the page that the final answer needs. The last line must be exactly one of these \
calls, with keyword arguments and the element id as a string:

do(action="Click", element="<id>")
do(action="Hover", element="<id>")
do(action="Type", argument="<text>", element="<id>")  # replaces the field's content; no Enter
do(action="Search", argument="<text>", element="<id>")  # types the text, then presses Enter
do(action="Select Dropdown Option", argument="<option text>", element="<id>")
do(action="Press Enter")
do(action="Scroll Up")
do(action="Scroll Down")
do(action="Go Backward")
do(action="Go Forward")
exit(message="<answer>")  # ends the task; put the requested information in the message, or \
leave it empty when the task asks for no information

Other actions are not available."""


def chat_messages(intent: str, history: list[str], html: str) -> list[dict]:
    """Chat form: system prompt; the task with the first page; then one assistant turn per past response,
    each followed by the next page (past pages as the placeholder, the current page in full). The HTML
    is cut with the same character rule as `webrl_prompt` (history = all other message text), never
    below zero characters."""
    pages = [HTML_PLACEHOLDER] * len(history) + [html]
    users = [f"Task Instruction: {intent}\n\n{pages[0]}"] + pages[1:]
    fixed = sum(len(u) for u in users[:-1]) + sum(len(r) for r in history)
    if len(history) == 0:
        fixed += len(users[0]) - len(html)
    if fixed + len(html) > PROMPT_CHAR_LIMIT:
        keep = max(0, PROMPT_CHAR_LIMIT - fixed)
        users[-1] = users[-1][: len(users[-1]) - len(html) + keep]
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for i, user in enumerate(users):
        messages.append({"role": "user", "content": user})
        if i < len(history):
            messages.append({"role": "assistant", "content": history[i]})
    return messages
