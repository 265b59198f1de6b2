"""``url_match``: the active page's URL against ``eval.reference_url`` (reference §5.3, §5.5, §5.6).

- ``webarena`` and ``browsergym`` (the original URLEvaluator, §5.3, §5.6): trailing '/' stripped; base =
  netloc + path; base score = some reference base is a *substring* of the predicted base (so ``.../viewed``
  matches ``.../viewedasdf``); the query parameters of *all* ``|OR|`` alternatives are merged into one
  key -> values map and every key must have one of its values in the prediction's query (extra parameters
  ignored). ``url_note`` must be "GOLD in PRED" (the default); anything else is an error.
- ``vab`` (URLExactEvaluator, §5.5): ``localhost`` -> ``127.0.0.1`` and one trailing '/' dropped; the rule is
  ``url_note`` with default **EXACT** (prediction equals one reference); "GOLD in PRED" is a plain substring test
  on the full URL strings, query order included.
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
    base_score = float(any(base in pred_base for base in bases))  # substring, not equality (§5.3)
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
    if rule == GOLD_IN_PRED:
        return float(any(ref in pred for ref in refs))
    raise EvaluationError(f"unknown url_note {rule!r}")


def url_match(task, page_url: str, *, mode: str) -> dict[str, Any]:
    spec = task.eval
    reference = spec.reference_url or ""
    if mode == "vab":
        rule = spec.url_note or "EXACT"  # missing url_note -> EXACT in vab only (Lite task 45; §5.5)
        score = vab_url_score(page_url, reference, rule)
    else:
        rule = spec.url_note or GOLD_IN_PRED
        if rule != GOLD_IN_PRED:  # the original raises on any other note (§5.3)
            raise EvaluationError(f"url_note {rule!r} is not supported by the {mode} URL evaluator")
        score = webarena_url_score(page_url, reference)
    return {"type": "url_match", "score": score,
            "checks": [{"rule": rule, "url": page_url, "reference": reference, "score": score}]}
