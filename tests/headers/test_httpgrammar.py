"""``httpgrammar.split``: lists split outside quoted strings and ``<...>``."""
from __future__ import annotations

import random

import pytest

from lakesuperior.httpgrammar import split


def _reference(text: str, sep: str, brackets: bool) -> list[str]:
    """Character by character: a separator counts outside quotes (with backslash
    escapes inside them) and, with ``brackets``, outside ``<...>``."""
    parts, buf = [], ""
    quoted = angle = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif quoted:
            escaped, quoted = ch == "\\", ch != '"'
        elif angle:
            angle = ch != ">"
        elif ch == '"':
            quoted = True
        elif brackets and ch == "<":
            angle = True
        elif ch == sep:
            parts.append(buf.strip())
            buf = ""
            continue
        buf += ch
    return [*parts, buf.strip()]


@pytest.mark.parametrize("brackets", [False, True])
def test_split_matches_the_grammar_on_random_lists(brackets):
    rng = random.Random(7)
    alphabet = 'ab ;,=<>"\\\t'
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
        for sep in ",;":
            assert split(text, sep, brackets=brackets) == _reference(text, sep, brackets), text


def test_split_examples():
    assert split('a, "b,c" ,d', ",") == ["a", '"b,c"', "d"]
    assert split("<http://x/a,b>; rel=x, <y>", ",", brackets=True) == [
        "<http://x/a,b>; rel=x", "<y>"]
    assert split("text/turtle;q=0.5 , */*", ",") == ["text/turtle;q=0.5", "*/*"]
    assert split("", ",") == [""]
