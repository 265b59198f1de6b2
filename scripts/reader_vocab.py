"""Build the `reader` model's vocabulary once: webrl/policy/reader_vocab.json (committed, versioned).

The vocabulary is a fixed list of whole words, numbers, punctuation runs and whitespace runs, so that the same word
is the same token wherever it stands (in the instruction, on the page, in the answer). It is read off a corpus that
does not move with the project: the pinned `miniwob` package's environment pages and word lists (the text a page can
show: its script's string literals and its markup's text), the embedded sites' page templates as they were when the
version was built, and the WebRL prompt's fixed text. Building it again after a template edit would make a new
model; so it is built only when its VERSION changes, and `webrl.policy.models` reads the committed file.

    .venv/bin/python scripts/reader_vocab.py
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import json
import re
from importlib import resources
from pathlib import Path

from webrl.policy.models import READER_PIECES, READER_SPECIAL, reader_vocab_path
from webrl.policy.prompt import SYSTEM_PROMPT, webrl_prompt

VERSION = 1
NUMBERS = 1000  # 0..999 are whole tokens: an element id is one token on the page and in the answer
SPACES = " \n\t\r\xa0"  # each a token and a continuation, so that any run of whitespace can be spelt
WHITESPACE = [*SPACES, "  ", "\n\n"]
PUNCTUATION_MIN_COUNT = 5  # a run of punctuation seen this often is one token; rarer ones are spelt out

STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')
MARKUP = re.compile(r"<script.*?</script>|<style.*?</style>|<[^>]*>", re.S)
WORD, PIECE = re.compile(r"\w+"), re.compile(READER_PIECES)


def shown_text(source: str) -> str:
    """What of a page's source can reach the screen: its scripts' string literals and its markup's text."""
    strings = " ".join(a or b for a, b in STRING.findall(source))
    return strings + " " + MARKUP.sub(" ", source)


def corpus() -> tuple[list[str], list[str]]:
    """(texts whose words and characters count, texts whose punctuation runs count: the markup itself too)."""
    miniwob = Path(importlib.metadata.distribution("miniwob").locate_file("miniwob/html"))
    pages = sorted((miniwob / "miniwob").glob("*.html")) + [miniwob / "common" / "ui_utils.js"]
    sites = resources.files("webrl.sites")
    templates = sorted(
        Path(str(t)) for site in sites.iterdir() if site.is_dir() for t in site.joinpath("templates").glob("*.html")
    )
    sources = [p.read_text(encoding="utf-8") for p in pages + templates]
    prompt = webrl_prompt(
        'Click on the "yes" button.', ['do(action="Click", element="1")'], '<button id="1"> yes </button>'
    )
    return [*map(shown_text, sources), SYSTEM_PROMPT, prompt], [*sources, SYSTEM_PROMPT, prompt]


def build() -> dict:
    words, markup = corpus()
    word_counts = collections.Counter(w for text in words for w in WORD.findall(text))
    chars = {c for text in words for c in text if not c.isspace()} | {chr(c) for c in range(33, 127)}
    runs = collections.Counter(
        p for text in markup for p in PIECE.findall(text) if 1 < len(p) <= 3 and not (p.isspace() or WORD.fullmatch(p))
    )
    numbers = [str(n) for n in range(NUMBERS)]
    tokens = [*READER_SPECIAL, *WHITESPACE, *numbers]
    tokens += sorted(chars - set(tokens))
    tokens += ["##" + c for c in sorted(chars | set(SPACES))]
    # "##" is the decoder's mark of a word's continuation: no whole token may contain it
    tokens += sorted(r for r, n in runs.items() if n >= PUNCTUATION_MIN_COUNT and "##" not in r and r not in tokens)
    seen = set(tokens)
    tokens += [w for w, _ in sorted(word_counts.items(), key=lambda item: (-item[1], item[0])) if w not in seen]
    return {
        "version": VERSION,
        "built_from": f"miniwob {importlib.metadata.version('miniwob')} pages and ui_utils.js; "
        "webrl's embedded site templates; the WebRL prompt's fixed text",
        "tokens": tokens,
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    path = reader_vocab_path()
    vocab = build()
    path.write_text(json.dumps(vocab, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{path}: version {VERSION}, {len(vocab['tokens'])} tokens")


if __name__ == "__main__":
    main()
