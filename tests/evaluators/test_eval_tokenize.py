"""Proof that the offline route gives NLTK's word_tokenize tokens (see webrl.evaluators.tokenize).

Expected lists follow from NLTK's two stages. The Treebank word tokenizer splits '$' from a number, keeps
decimals and 'a/b' together, and splits a period off only at the END of a sentence string; so whatever Punkt
decides about sentence breaks shows up as a separate '.' token (or not). Punkt breaks after a period unless the
word is a known abbreviation of the English model (dr, mr, mrs, st, u.s, ...) or, for a number or an initial,
the next word is orthographically 'not a sentence starter' (a lower-case word also seen capitalised, e.g. 'then',
'it'). For a known abbreviation followed by a capitalised frequent sentence starter ('It'), it breaks.
"""

from __future__ import annotations

import pytest

from webrl.evaluators.tokenize import sent_tokenize, word_tokenize

CASES = [
    # abbreviation (model has 'dr'): no break; '$' split from '0.00'; the final period split off
    ("dr. smith paid $0.00 for it.", ["dr.", "smith", "paid", "$", "0.00", "for", "it", "."]),
    ("Dr. Smith went home. He was tired.", ["Dr.", "Smith", "went", "home", ".", "He", "was", "tired", "."]),
    # decimals stay whole; the sentence-final period is split
    ("the total is 3.5 kg.", ["the", "total", "is", "3.5", "kg", "."]),
    ("the order total was $0.00.", ["the", "order", "total", "was", "$", "0.00", "."]),
    ("it costs $0.00", ["it", "costs", "$", "0.00"]),
    ("the answer is 0.", ["the", "answer", "is", "0", "."]),
    # N/A is one token, with or without a sentence period
    ("n/a", ["n/a"]),
    ("the answer is n/a.", ["the", "answer", "is", "n/a", "."]),
    # 'u.s' is a known abbreviation: mid-sentence it keeps its period...
    ("made in the u.s. by hand", ["made", "in", "the", "u.s.", "by", "hand"]),
    # ...but before a capitalised sentence starter Punkt breaks, and the period becomes its own token
    ("i live in the U.S. It is big.", ["i", "live", "in", "the", "U.S", ".", "It", "is", "big", "."]),
    # a number then a lower-case word seen capitalised elsewhere ('then'): no break, so '65.' stays one token...
    ("it was 65. then 3.", ["it", "was", "65.", "then", "3", "."]),
    ("we paid 3.5. it was cheap.", ["we", "paid", "3.5.", "it", "was", "cheap", "."]),
    # ...while before a capitalised word the orthography is 'unknown' and the break stands: '65' '.'
    ("it was 65. Then 3.", ["it", "was", "65", ".", "Then", "3", "."]),
    ("I paid 5. It was fine.", ["I", "paid", "5", ".", "It", "was", "fine", "."]),
    # 'e.g' is NOT in the English model: a break, even before a lower-case word
    ("e.g. this", ["e.g", ".", "this"]),
    ("st. louis", ["st.", "louis"]),
    ("mr. and mrs. smith", ["mr.", "and", "mrs.", "smith"]),
    ("yes.", ["yes", "."]),
    ("order 000000170.", ["order", "000000170", "."]),
    ("65 |or| 3", ["65", "|or|", "3"]),
    ("price: $12.99/month", ["price", ":", "$", "12.99/month"]),
    ("they can't go", ["they", "ca", "n't", "go"]),
    ('"quoted" text', ["``", "quoted", "''", "text"]),
]


@pytest.mark.parametrize(("text", "tokens"), CASES)
def test_word_tokenize_matches_nltk_rules(text, tokens):
    assert word_tokenize(text) == tokens


def test_sentence_splitting_is_what_changes_the_tokens():
    assert sent_tokenize("it was 65. Then 3.") == ["it was 65.", "Then 3."]
    assert sent_tokenize("it was 65. then 3.") == ["it was 65. then 3."]
    assert sent_tokenize("Dr. Smith went home. He was tired.") == ["Dr. Smith went home.", "He was tired."]


def test_same_as_nltk_with_its_own_data_when_installed():
    """Where NLTK's punkt_tab data is installed (not in CI: it needs a download), compare directly."""
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        pytest.skip("NLTK punkt_tab data not installed (the offline route is what we use instead)")
    for text, _ in CASES:
        assert word_tokenize(text) == nltk.word_tokenize(text)
