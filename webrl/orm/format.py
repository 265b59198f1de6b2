"""The ORM prompt: the one place where it is built.

Layout, as the official `add_overall_reward` writes it, with Llama-3's header tokens written out as text so
that every model sees the same bytes (a Llama-3 tokenizer turns them into its special tokens, others read
them as text; no chat template is involved):

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\n{SYSTEM}<|eot_id|>
    <|start_header_id|>user<|end_header_id|>\\n\\n{USER}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\\n

(one line in the real prompt), with USER = the intent, the action history (each raw response on one line, its
newlines turned into "; ") and the page the agent saw before its last action. The model's answer is the token
"YES" or "NO" right after the assistant header.

Truncation differs from the official code on purpose: the official ids were cut at 16384 from the
end, which drops the assistant header and makes the score meaningless. Here only the page is cut, token-exact
from its end, so the question and the header always survive.
"""

from __future__ import annotations

from collections.abc import Sequence

from webrl.policy.prompt import END_OF_TURN

BEGIN = "<|begin_of_text|>"
ANSWERS = ("YES", "NO")  # the answer tokens; p(YES) is read from these two logits

SYSTEM = (
    "You are an expert judge of a web navigation agent's work. You are shown what the user asked for, the "
    "actions the agent took, and the state of the web page at the end. Decide whether the agent carried out "
    "the user's request successfully. Answer YES if it did and NO if it did not."
)


def _header(role: str) -> str:
    return f"<|start_header_id|>{role}<|end_header_id|>\n\n"


def history_lines(responses: Sequence[str]) -> str:
    """One line per step: the raw response with its newlines turned into '; ' (as the official code)."""
    return "\n".join(response.replace("\n", "; ") for response in responses)


def prompt_parts(intent: str, responses: Sequence[str], html: str) -> tuple[str, str, str]:
    """(head, html, tail): the prompt is their concatenation; only the middle part may be cut."""
    head = (
        f"{BEGIN}{_header('system')}{SYSTEM}{END_OF_TURN}{_header('user')}"
        f"The User Intent:\n{intent}\n\nAction History:\n{history_lines(responses)}\n\n"
        "The Current Screenshot:\n"
    )
    return head, html, f"{END_OF_TURN}{_header('assistant')}"


def orm_prompt(intent: str, responses: Sequence[str], html: str) -> str:
    """The full ORM prompt text, uncut."""
    return "".join(prompt_parts(intent, responses, html))


class PromptTooLong(ValueError):
    """The prompt without any page does not fit: callers skip the example and count it."""


def orm_input_ids(tokenizer, intent: str, responses: Sequence[str], html: str, max_tokens: int) -> list[int]:
    """The prompt's token ids, at most `max_tokens`: the page's tokens are cut from its end when needed.

    Head, page and tail are tokenized separately (no special tokens added: the prompt writes its own BOS),
    so the cut is exact in tokens and the same prompt gives the same ids whether it was cut or not."""
    head, page, tail = (
        tokenizer(part, add_special_tokens=False).input_ids for part in prompt_parts(intent, responses, html)
    )
    room = max_tokens - len(head) - len(tail)
    if room < 0:
        raise PromptTooLong(
            f"intent and action history take {len(head) + len(tail)} tokens, more than {max_tokens} before any page"
        )
    return head + page[:room] + tail
