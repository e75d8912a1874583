"""``httpgrammar.split``: lists split outside quoted strings and ``<...>``; a
text with nothing to skip over is split by ``str.split``, which must agree with
the character-by-character walk (``split_chars``)."""
from __future__ import annotations

import random

import pytest

from lakesuperior.http.grammar import split, split_chars


@pytest.mark.parametrize("brackets", [False, True])
def test_the_fast_path_agrees_with_the_character_walk(brackets):
    rng = random.Random(7)
    alphabet = 'ab ;,=<>"\\\t'
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
        for sep in ",;":
            assert split(text, sep, brackets=brackets) == split_chars(
                text, sep, brackets=brackets), text


def test_split_examples():
    assert split('a, "b,c" ,d', ",") == ["a", '"b,c"', "d"]
    assert split("<http://x/a,b>; rel=x, <y>", ",", brackets=True) == [
        "<http://x/a,b>; rel=x", "<y>"]
    assert split("text/turtle;q=0.5 , */*", ",") == ["text/turtle;q=0.5", "*/*"]
    assert split("", ",") == [""]
    assert split('"a\\",b" , c', ",") == ['"a\\",b"', "c"]        # an escaped quote
    assert split('"a\\",b" , c', ",", escapes=False) == ['"a\\"', 'b" , c']
    assert split("<a,b>, c", ",") == ["<a", "b>", "c"]               # no brackets: split
    assert split_chars("a; b", ";") == ["a", "b"]
