"""``url_match``: the active page's URL against ``eval.reference_url``.

- ``webarena`` and ``browsergym`` (the original URLEvaluator): trailing '/' stripped; base =
  netloc + path; base score = some reference base is a *substring* of the predicted base (so ``.../viewed``
  matches ``.../viewedasdf``); the query parameters of *all* ``|OR|`` alternatives are merged into one
  key -> values map and every key must have one of its values in the prediction's query (extra parameters
  ignored). ``url_note`` must be "GOLD in PRED" (the default); anything else is an error.
- ``vab`` (URLExactEvaluator): ``localhost`` -> ``127.0.0.1`` and one trailing '/' dropped; the rule is
  ``url_note`` with default **EXACT** (prediction equals one reference); "GOLD in PRED" is a plain substring test
  on the full URL strings, query order included; any other note is an error.

In every mode, as in all three originals: a url_note that is present but null is an unknown note (they read it
with a default that only a missing key takes), and a null reference_url is an error.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from urllib.parse import parse_qs, urlparse

from webrl.evaluators.result import EvaluationError

OR = " |OR| "
GOLD_IN_PRED = "GOLD in PRED"


def _split(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urlparse(url)
    return parsed.netloc + parsed.path, parse_qs(parsed.query)


def webarena_url_score(pred_url: str, reference_url: str) -> float:
    pred_base, pred_query = _split(pred_url.rstrip("/"))
    bases: list[str] = []
    merged: dict[str, set[str]] = defaultdict(set)
    for ref in reference_url.split(OR):
        base, query = _split(ref.rstrip("/"))
        bases.append(base)
        for key, values in query.items():
            merged[key].update(values)
    base_score = float(any(base in pred_base for base in bases))  # substring, not equality
    query_score = 1.0
    for key, values in merged.items():
        query_score *= float(any(v in pred_query.get(key, []) for v in values))
    return base_score * query_score


def vab_clean_url(url: str) -> str:
    url = str(url).replace("localhost", "127.0.0.1")
    return url.removesuffix("/")


def vab_url_score(pred_url: str, reference_url: str, rule: str) -> float:
    pred = vab_clean_url(pred_url)
    refs = [vab_clean_url(u) for u in reference_url.split(OR)]
    if rule == "EXACT":
        return float(pred in refs)
    return float(any(ref in pred for ref in refs))


def url_match(task, page_url: str, *, mode: str) -> dict[str, Any]:
    spec = task.eval
    if spec.reference_url is None:  # the originals split it
        raise EvaluationError(
            "eval.reference_url is null: the url_match evaluator has no reference", "eval.reference_url"
        )
    # the originals read the note with a default (.get): a missing note takes it, a null one does not
    rule = spec.url_note if "url_note" in spec.model_fields_set else ("EXACT" if mode == "vab" else GOLD_IN_PRED)
    known = ("EXACT", GOLD_IN_PRED) if mode == "vab" else (GOLD_IN_PRED,)
    if rule not in known:  # the originals raise on any other note
        raise EvaluationError(
            f"url_note {rule!r} is not supported by the {mode} URL evaluator ({' or '.join(known)})", "eval.url_note"
        )
    if mode == "vab":  # missing url_note -> EXACT in vab only (Lite task 45)
        score = vab_url_score(page_url, spec.reference_url, rule)
    else:
        score = webarena_url_score(page_url, spec.reference_url)
    return {
        "type": "url_match",
        "score": score,
        "checks": [{"rule": rule, "url": page_url, "reference": spec.reference_url, "score": score}],
    }
