"""The guard: what a reward that agents are trained on must not hand out, whatever the original rules allow.

RL optimises whatever the reward lets through, and WebArena's rules let dumps through: a ``must_include`` answer
passes when the references are substrings of it (the whole page's text passes most string tasks), and a
``url_match`` passes when the reference's netloc+path is a substring of the last URL (one URL listing every
reference passes them all, a 404 page included). The guard fails an episode on any of:

- **a dumped answer** (string_match with ``must_include``): the answer holds more than ``MAX_EXTRA_WORDS`` words
  that are in no reference and not in the task's intent (restating the question is free), or, where a reference
  is a number, a number that is in no reference and not in the intent (the other values of a list of
  alternatives: "1 2 3 4 5" stars). A decimal reference may be given more precisely (40.405 as 40.40592).
- **a URL that only contains the reference** (url_match): scheme, host, port and path must equal one reference's
  after normalisation (case of scheme and host, ``localhost`` as ``127.0.0.1``, default ports, percent-escapes, a
  trailing '/'), and that reference's query parameters must be among the last URL's (others may be added).
- **a last page that did not answer 2xx** (url_match, and program_html targets that read the last page): an error
  page echoes its URL, and a 404 is no page the task asked for.

The thresholds are decided from data (tests/evaluators/test_guard.py): every oracle answer of both embedded splits
passes, and every dump listed there fails. The ``strict`` mode scores with WebArena's rules and this guard (a failed
guard is a factor of 0); the leaderboard modes keep their rules and mark a 1.0 that the guard fails as
``dump_suspect``.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlsplit

OR = " |OR| "
MAX_EXTRA_WORDS = 16
WORD = re.compile(r"[^\W_]+(?:[.,:'’][^\W_]+)*")  # 2,477.40 and 0:06 are one word each
NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK = {"localhost": "127.0.0.1"}


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def answer_problems(references: list[str], answer: str | None, intent: str) -> list[str]:
    """Why `answer` is a dump of a must_include task with these `references` (none: it is an answer)."""
    alternatives = [alt for ref in references for alt in ref.split(OR)]
    given = set(words(" ".join(alternatives)))
    asked = set(words(intent))
    said = words(answer or "")
    extra = [w for w in said if w not in given and w not in asked]
    problems = []
    if len(extra) > MAX_EXTRA_WORDS:
        problems.append(
            f"the answer is much longer than its references: {len(extra)} words are in no reference and not in the "
            f"task (at most {MAX_EXTRA_WORDS})"
        )
    numbers = [w for w in given if NUMBER.fullmatch(w)]
    if numbers:
        others = [
            w
            for w in dict.fromkeys(said)
            if NUMBER.fullmatch(w)
            and w not in given
            and w not in asked
            and not any("." in n and w.startswith(n) for n in numbers)  # more decimals of a decimal reference
        ]
        if others:
            shown = ", ".join(others[:5]) + (", …" if len(others) > 5 else "")
            problems.append(f"the answer also names numbers that no reference holds ({shown}): a list of alternatives")
    return problems


def _parts(url: str) -> tuple[str, str, int | None, str, dict[str, list[str]]] | None:
    """A URL's scheme, host, port, path and query, normalised; None for one that does not parse."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:  # a bracketed host that is no IPv6 address, a port that is no number
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    path = re.sub(r"/+", "/", unquote(parts.path)).rstrip("/")
    return scheme, LOOPBACK.get(host, host), port, path, parse_qs(parts.query, keep_blank_values=True)


def url_matches(reference: str, url: str) -> bool:
    """Whether `url` is the page `reference` names: the same scheme, host, port and path, and every query parameter
    of the reference among the URL's."""
    ref, pred = _parts(reference), _parts(url)
    if ref is None or pred is None:
        return False
    *base, query = ref
    *pred_base, pred_query = pred
    return base == pred_base and all(set(values) <= set(pred_query.get(key, [])) for key, values in query.items())


def url_problems(reference_url: str, url: str) -> list[str]:
    if any(url_matches(ref.strip(), url) for ref in reference_url.split(OR)):
        return []
    return [f"the last URL is not the reference's page (same scheme, host, port and path, its query): {url[:300]}"]


def status_problems(status: int | None, strict: bool) -> list[str]:
    """An unknown status fails only the strict mode: a leaderboard score is marked for what is known of it."""
    if (status is None and not strict) or (status is not None and 200 <= status < 300):
        return []
    answered = "its HTTP status is unknown" if status is None else f"it answered HTTP {status}"
    return [f"the last page did not answer 2xx ({answered})"]


def reads_last_page(task) -> bool:
    """Whether the task's checks judge the page the agent ended on: url_match, or a program_html target that reads
    it before any target navigated away (a later "last" is the page the evaluator opened)."""
    if "url_match" in task.eval.eval_types:
        return True
    for target in task.eval.program_html if "program_html" in task.eval.eval_types else []:
        if target.url == "last" or "__last_url__" in target.url:
            return True
        if target.url:  # a page of the task's own: the evaluator goes there
            return False
    return False


def guard_problems(task, answer: str | None, last_url: str | None, status: int | None, *, strict: bool) -> list[str]:
    """Why the guard fails this episode (none: it passes). `last_url` and `status`: the page the agent ended on,
    before any evaluator navigated, and the HTTP status its document answered with (None: unknown). `strict`: for
    the strict mode's score (else for a leaderboard mode's mark)."""
    spec = task.eval
    problems: list[str] = []
    references = spec.reference_answers.must_include if spec.reference_answers is not None else None
    if "string_match" in spec.eval_types and isinstance(references, list):
        problems += answer_problems(references, answer, task.intent)
    if "url_match" in spec.eval_types and spec.reference_url is not None:
        problems += url_problems(spec.reference_url, last_url or "")
    if reads_last_page(task):
        problems += status_problems(status, strict)
    return problems
