"""``string_match``: the agent's answer against ``eval.reference_answers``.

Modes:
- ``webarena`` (original) and ``browsergym`` (which reuses the original StringEvaluator): cleaning
  strips, tokenises only a one-character reference of a one-item must_include list, does not split ``|OR|``,
  one judge call per fuzzy reference, ignores unknown approaches.
- ``vab``: cleaning does not strip; must_include tokenises whenever the reference is one token and splits
  ``|OR|``; fuzzy references joined into one call; adds must_exclude, one_of, required_values.

Every judge call the originals make is made, in their order, even after a factor of 0. Where the originals raise
on the task's own data, so do webarena and vab, at the same point: null reference_answers, a must_include or
fuzzy_match that is not a list (their assert), a missing string_note when the unachievable-reason judge is
reached (a KeyError). browsergym keeps webrl's normalisation: a bare string is a one-item list, a missing
string_note an empty reason (null reference_answers is an error there too).
"""

from __future__ import annotations

from typing import Any

from webrl.evaluators.judge import Judge, ask, decide_fuzzy, decide_ua, fuzzy_messages, ua_messages
from webrl.evaluators.result import EvaluationError, Running, as_list
from webrl.evaluators.tokenize import word_tokenize

OR = " |OR| "
NA = "N/A"


# -- the matching rules ---------------------------------------------------------------------------------------


def clean_answer(text: str, mode: str = "webarena") -> str:
    """Strip (not in vab), drop one pair of enclosing single quotes, else of double quotes, lower-case."""
    if mode != "vab":
        text = text.strip()
    if (
        len(text) >= 1
        and text.startswith("'")
        and text.endswith("'")
        or len(text) >= 1
        and text.startswith('"')
        and text.endswith('"')
    ):
        text = text[1:-1]
    return text.lower()


def exact_match(ref: str, pred: str, mode: str = "webarena") -> float:
    return float(clean_answer(pred, mode) == clean_answer(ref, mode))


def _vab_tokens(text: str) -> list[str]:
    """VAB's prediction tokens: NLTK tokens plus the parts of every token that contains '/'."""
    tokens = word_tokenize(text)
    return tokens + [part for token in tokens if "/" in token for part in token.split("/") if part]


def must_include(ref: str, pred: str, mode: str = "webarena", tokenize: bool = False) -> float:
    """webarena/browsergym: token membership only when ``tokenize`` (one-item list), the cleaned reference
    is ONE character and NLTK gives one token for it; otherwise a substring test ("170" is in "000000170").
    vab: token membership whenever NLTK gives one token for the reference ("170" is not a token of
    "000000170"); otherwise a substring test."""
    clean_ref, clean_pred = clean_answer(ref, mode), clean_answer(pred, mode)
    if mode == "vab":
        if len(word_tokenize(clean_ref)) == 1:
            return float(clean_ref in _vab_tokens(clean_pred))
        return float(clean_ref in clean_pred)
    if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
        return float(clean_ref in word_tokenize(clean_pred))
    return float(clean_ref in clean_pred)


def must_exclude(ref: str, pred: str) -> float:
    """vab: 1 when the reference is absent: token membership when it is one NLTK token (plain tokens, no '/'
    parts), else a substring test."""
    clean_ref, clean_pred = clean_answer(ref, "vab"), clean_answer(pred, "vab")
    if len(word_tokenize(clean_ref)) == 1:
        return float(clean_ref not in word_tokenize(clean_pred))
    return float(clean_ref not in clean_pred)


INEQUALITIES = (  # checked in this order: the first operator found in the text is used
    ("<=", lambda x, y, tol: x <= y + tol),
    (">=", lambda x, y, tol: x >= y - tol),
    ("==", lambda x, y, tol: abs(x - y) <= tol),
    ("<", lambda x, y, tol: x < y + tol),
    (">", lambda x, y, tol: x > y - tol),
)


def to_int(text: str) -> int | None:
    """VAB's number reading for required_values: strip, drop commas, int(); anything else is None."""
    try:
        return int(text.strip().replace(",", ""))
    except ValueError:
        return None


def satisfies(value: float, inequality: str, tol: float = 1e-8) -> bool:
    """``value`` against e.g. ``"< 700"`` or ``">= 300"`` (with VAB's small tolerance)."""
    for op, test in INEQUALITIES:
        if op in inequality:
            _, _, number = inequality.partition(op)
            try:
                return test(value, float(number.strip()), tol)
            except ValueError:
                break
    raise EvaluationError(f"invalid inequality {inequality!r}")


def required_values(values: list[str], selected: str | int | None) -> float:
    number = to_int(selected) if isinstance(selected, str) else selected
    if number is None:
        return 0.0
    return float(all(any(satisfies(number, alt) for alt in v.split(OR)) for v in values))


# -- the evaluator --------------------------------------------------------------------------------------------


async def string_match(task, answer: str | None, *, mode: str, judge: Judge | None) -> dict[str, Any]:
    spec = task.eval
    if answer is None:
        # browsergym: no answer -> the dummy "whatever" (so that its fuzzy judge never asserts);
        # webarena/vab: the harness always ends with a stop action; a missing answer is an empty one.
        answer = "whatever" if mode == "browsergym" else ""
    pred = clean_answer(answer, mode)  # cleaned once here and again inside each matcher (as the originals)
    if spec.reference_answers is None:  # the originals call .items() on it
        raise EvaluationError(
            "eval.reference_answers is null: the string_match evaluator has no references", "eval.reference_answers"
        )
    run = Running()
    for approach, value in spec.reference_answers.items():
        if approach == "exact_match":
            run.times(exact_match(value, pred, mode), rule="exact_match", reference=value)
        elif approach == "must_include":
            value = as_list(value, "eval.reference_answers.must_include", mode)
            if mode == "vab":
                for item in value:  # vab splits |OR| alternatives
                    run.times(
                        float(any(must_include(alt, pred, mode) for alt in item.split(OR))),
                        rule="must_include",
                        reference=item,
                    )
            else:
                tokenize = len(value) == 1  # as the original: tokenising only for a one-item list; |OR| is literal text
                for item in value:
                    run.times(must_include(item, pred, mode, tokenize), rule="must_include", reference=item)
        elif approach == "fuzzy_match":
            if value == NA:  # only the *string* "N/A" (the list ["N/A"] is an ordinary reference)
                run.times(exact_match(NA, pred, mode), rule="exact_match", reference=NA)
                if run.pending:
                    # "score != 1" cannot be decided while an unjudged factor is in the product
                    run.checks.append({"rule": "ua_match", "score": None, "note": "undecidable: unjudged factor"})
                elif run.value != 1.0:
                    # the unachievable-reason judge REPLACES the running score (as in the originals)
                    if spec.string_note is None and mode != "browsergym":  # the originals: a KeyError
                        raise EvaluationError(
                            "eval.string_note is missing: the unachievable-reason judge needs it as its reference",
                            "eval.string_note",
                        )
                    score, reply = await ask(judge, ua_messages(task.intent, spec.string_note or "", pred), decide_ua)
                    run.value, run.pending = (1.0, True) if score is None else (score, False)
                    run.checks.append(
                        {
                            "rule": "ua_match",
                            "reference": spec.string_note or "",
                            "score": score,
                            "reply": reply,
                            "replaces": True,
                        }
                    )
            else:
                value = as_list(value, "eval.reference_answers.fuzzy_match", mode)
                # vab: one call for all references; the others: one call per reference
                for reference in [", ".join(value)] if mode == "vab" else value:
                    await _fuzzy(run, judge, mode, task.intent, reference, pred)
        elif mode == "vab" and approach == "must_exclude":
            for item in value:
                run.times(must_exclude(item, pred), rule="must_exclude", reference=item)
        elif mode == "vab" and approach == "one_of":
            found = any(clean_answer(v, mode) in pred for v in value)  # substring of the once-cleaned answer
            run.times(float(found), rule="one_of", reference=value)
        elif mode == "vab" and approach == "required_values":
            run.times(required_values(value, pred), rule="required_values", reference=value)
        else:
            # The originals' match statement has no default case: an unknown approach is skipped (recorded).
            run.checks.append({"rule": approach, "ignored": True, "note": f"not a {mode} rule"})
    return {"type": "string_match", "answer": answer, "score": run.outcome(), "checks": run.checks}


async def _fuzzy(run: Running, judge, mode: str, intent: str, reference: str, pred: str) -> None:
    # called even when a 0 already fixes the product, as the originals do: the call count and a later
    # unparsable reply (an error) are theirs
    score, reply = await ask(judge, fuzzy_messages(intent, reference, pred, vab=mode == "vab"), decide_fuzzy)
    run.times(score, rule="fuzzy_match", reference=reference, reply=reply)
