"""Accept (RFC 7231 section 5.3.2) and media types: ``lakesuperior.http.mediatypes``,
also reached as ``lakesuperior.http.headers``."""
from __future__ import annotations

import random

import pytest

from lakesuperior.exceptions import InvalidHeaderError
from lakesuperior.http import mediatypes as mt

JSONLD = "application/ld+json"
COMPACTED = "http://www.w3.org/ns/json-ld#compacted"
EXPANDED = "http://www.w3.org/ns/json-ld#expanded"
FLATTENED = "http://www.w3.org/ns/json-ld#flattened"
OFFERED = ["text/turtle", *(f'{JSONLD}; profile="{p}"' for p in (COMPACTED, EXPANDED, FLATTENED)),
           "application/n-triples", "text/html"]


def test_headers_reexports_mediatypes():
    assert mt.negotiate is mt.negotiate and mt.parse_accept is mt.parse_accept
    assert mt.is_media_type is mt.is_media_type and mt.MediaRange is mt.MediaRange


def test_parse_accept():
    ranges = mt.parse_accept('text/turtle;charset="utf-8";q=0.5;ext=1, */*;q=0, , Text/*')
    assert ranges == [mt.MediaRange("text", "turtle", {"charset": "utf-8"}, 0.5),
                      mt.MediaRange("*", "*", {}, 0.0), mt.MediaRange("text", "*", {}, 1.0)]
    assert [r.specificity for r in ranges] == [(True, True, 1), (False, False, 0),
                                               (True, False, 0)]
    assert mt.parse_accept(None) == mt.parse_accept("") == mt.parse_accept(" , ") == []


@pytest.mark.parametrize("accept, says", [
    ("turtle", "'turtle' is not a media range"),
    ("text/", "is not a media range"),
    ("*/turtle", "wildcard type needs a wildcard subtype"),
    ("text/turtle;q=1.5", "q=1.5 is not a q-value"),
    ("text/turtle;q=0.1234", "q=0.1234 is not a q-value"),
    ("text/turtle;q", "has no '='"),
    ("text/turtle;=x", "parameter name '' is not a token"),
    ('text/turtle;a="open', "neither a token nor a quoted string"),
    ("text/turtle;a=b c", "neither a token nor a quoted string"),
    ("text/turtle, bad", "'bad' is not a media range"),
])
def test_parse_accept_malformed(accept, says):
    with pytest.raises(InvalidHeaderError, match="Malformed Accept header") as e:
        mt.parse_accept(accept)
    assert says in str(e.value)
    lenient = mt.parse_accept(accept, strict=False)               # skipped, no error
    assert len(lenient) == len([i for i in accept.split(",") if "text/turtle" == i.strip()])
    with pytest.raises(InvalidHeaderError):
        mt.negotiate(accept, OFFERED, strict=True)
    assert mt.negotiate(accept, ["text/turtle"]) in ("text/turtle", None)


@pytest.mark.parametrize("accept, expected", [
    (None, "text/turtle"),
    ("", "text/turtle"),
    ("text/turtle;charset=utf-8", "text/turtle"),
    ("text/turtle;charset=UTF8", "text/turtle"),
    ("text/turtle;charset=iso-8859-1", None),
    ("text/turtle;charset=iso-8859-1, */*;q=0.1", "text/turtle"),  # the range matches nothing
    (JSONLD, OFFERED[1]),                                          # compacted first
    (f'{JSONLD};profile="{EXPANDED}"', OFFERED[2]),
    (f'{JSONLD};profile="{FLATTENED}";charset=utf-8', OFFERED[3]),
    (f'{JSONLD};profile="http://x/unknown"', OFFERED[1]),         # unknown profile: ignored
    (f'{JSONLD};profile="http://x/unknown {FLATTENED}"', OFFERED[3]),
    (f'{JSONLD};q=0.5, {JSONLD};profile="{EXPANDED}"', OFFERED[2]),
    (f'{JSONLD};profile="{EXPANDED}";q=0, {JSONLD}', OFFERED[1]),
    (f'{JSONLD};profile="{COMPACTED}";q=0, {JSONLD}', OFFERED[2]),  # compacted excluded
    ("*/*, application/n-triples", "application/n-triples"),        # exact beats */*
    ("application/*, application/n-triples", "application/n-triples"),  # exact beats type/*
    ("*/*, text/*", "text/turtle"),                                  # type/* beats */*
    ("*/*;q=0.5, text/*;q=0.4", OFFERED[1]),     # text/* gives text types 0.4: q first
    ("application/n-triples;q=0.5, */*;q=0.6", "text/turtle"),
    ("text/turtle;q=0, text/*", "text/html"),
    ("text/turtle;level=1", None),                                 # other parameters match
    ("text/turtle", "text/turtle"), (" TEXT/Turtle ", "text/turtle"),  # one bare range
    ("application/ld+json", OFFERED[1]), ("*/*", "text/turtle"), ("text/*", "text/turtle"),
    ("application/*", OFFERED[1]), ("image/png", None),
])
def test_negotiate_offers_with_parameters(accept, expected):
    assert mt.negotiate(accept, OFFERED, strict=True) == expected
    assert mt.negotiate(accept, OFFERS, strict=True) == expected    # parsed once: the same


OFFERS = mt.Offers(OFFERED)


def test_offers_are_the_sequence_of_their_media_types_parsed_once():
    assert list(OFFERS) == OFFERED and len(OFFERS) == len(OFFERED)
    assert OFFERS[0] == "text/turtle" and OFFERS[-1] == "text/html"
    assert OFFERS[1:3] == tuple(OFFERED[1:3]) and ", ".join(OFFERS) == ", ".join(OFFERED)
    assert [(r.type, r.subtype) for r in OFFERS.parsed][:2] == [("text", "turtle"),
                                                              ("application", "ld+json")]
    assert OFFERS.profiles == frozenset({COMPACTED, EXPANDED, FLATTENED})
    assert mt.Offers is mt.Offers
    with pytest.raises(ValueError):
        mt.Offers(["text/turtle", "text/*"])        # a range is not a media type to offer
    assert mt.negotiate("text/turtle", mt.Offers([])) is None
    with pytest.raises(InvalidHeaderError):
        mt.negotiate("text", OFFERS, strict=True)     # malformed: refused as without Offers


def test_negotiate_offers_must_be_media_types():
    with pytest.raises(ValueError):
        mt.negotiate("*/*", ["text/*"])
    assert mt.negotiate("*/*", []) is None


def test_parameter():
    assert mt.parameter(f'{JSONLD}; Profile="{EXPANDED}"', "profile") == EXPANDED
    assert mt.parameter(JSONLD, "profile") is None


def test_offers_negotiate_as_a_plain_sequence_would():
    """The table of ``Offers`` answers what the full negotiation answers, on random
    Accept values made of ranges, parameters, separators and junk."""
    rng = random.Random(7)
    parts = ["text/turtle", "TEXT/TURTLE", "text/*", "*/*", JSONLD, "application/*",
             "text/html", "application/n-triples", "image/png", "text", "*/turtle", ";q=0",
             ";q=0.5", ";charset=utf-8", f';profile="{EXPANDED}"', ",", " ", "\t", "", "/"]
    for _ in range(3000):
        accept = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 4)))
        for strict in (False, True):
            answers = []
            for offered in (OFFERED, OFFERS):
                try:
                    answers.append(mt.negotiate(accept, offered, strict=strict))
                except InvalidHeaderError:
                    answers.append(InvalidHeaderError)
            assert answers[0] == answers[1], (accept, strict)
