"""Media types and content negotiation (RFC 7231 sections 3.1.1.1 and 5.3.2): pure
functions from an ``Accept`` value and the offered media types to the one to serve.

An offer may carry parameters (``application/ld+json; profile="..."``). A media
range matches an offer when its type and subtype match (``*`` matching any) and
so do its parameters, with two allowances every served representation meets:
``charset`` matches when it names UTF-8 (all output is UTF-8), and a ``profile``
naming none of the offered profiles is ignored (a JSON-LD client asking for a
profile this server does not know gets the default one, as from Fedora).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import overload

from lakesuperior.exceptions import InvalidHeaderError
from lakesuperior.http.grammar import TOKEN, param, param_problem, qvalue, split

_UTF8 = ("utf-8", "utf8")


@dataclass(frozen=True)
class MediaRange:
    """One element of ``Accept``: type and subtype (lower-cased, ``*`` for any),
    parameters (names lower-cased, values as sent) and its q-value."""

    type: str
    subtype: str
    params: Mapping[str, str] = field(default_factory=dict, hash=False)
    q: float = 1.0

    @property
    def specificity(self) -> tuple[bool, bool, int]:
        """Exact types rank above ``type/*``, above ``*/*``; then more parameters."""
        return (self.type != "*", self.subtype != "*", len(self.params))


def _range(text: str) -> MediaRange | str:
    """The media range of one ``Accept`` element, or why it is not one."""
    head, *rest = split(text, ";")
    mtype, slash, sub = head.lower().partition("/")
    mtype, sub = mtype.strip(), sub.strip()
    if not (slash and TOKEN.fullmatch(mtype) and TOKEN.fullmatch(sub)):
        return f"{head!r} is not a media range (type/subtype, type/* or */*)"
    if mtype == "*" != sub:
        return f"{head!r}: a wildcard type needs a wildcard subtype (*/*)"
    params: dict[str, str] = {}
    q = 1.0
    for item in rest:
        if not item:
            continue
        problem = param_problem(item)
        if problem:
            return problem
        name, value = param(item)
        if name == "q":   # what follows q are accept-ext, not media type parameters
            parsed = qvalue(value)
            if parsed is None:
                return f"q={value} is not a q-value (0 to 1, at most three decimals)"
            q = parsed
            break
        params[name] = value or ""
    return MediaRange(mtype, sub, params, q)


def parse_accept(value: str | None, *, strict: bool = True) -> list[MediaRange]:
    """The media ranges of an ``Accept`` value (RFC 7231 section 5.3.2), in order.

    Empty list elements are skipped (RFC 7230 section 7). ``strict``: a malformed
    element raises ``InvalidHeaderError`` saying why; else it is skipped.
    """
    ranges = []
    for item in split(value or "", ","):
        if not item:
            continue
        parsed = _range(item)
        if isinstance(parsed, str):
            if strict:
                raise InvalidHeaderError(f"Malformed Accept header: {parsed}")
            continue
        ranges.append(parsed)
    return ranges


def _offer(text: str) -> MediaRange:
    parsed = _range(text)
    if isinstance(parsed, str) or parsed.type == "*" or parsed.subtype == "*":
        raise ValueError(f"Not a media type to offer: {text!r}")
    return parsed


@dataclass(frozen=True, init=False, eq=False)
class Offers(Sequence[str]):
    """Media types to offer, in order of preference (a sequence of them), parsed
    once: ``negotiate`` parses a plain sequence of offers on every call, and these
    not again (the server's constant lists of what it serves)."""

    texts: tuple[str, ...]
    parsed: tuple[MediaRange, ...]
    profiles: frozenset[str]
    #: The answer to an ``Accept`` of one bare range (``type/subtype``, ``type/*``
    #: or ``*/*``, lower-cased): the first offer it matches.
    simple: Mapping[str, str]

    def __init__(self, offered: Iterable[str]):
        texts = tuple(offered)
        parsed = tuple(_offer(o) for o in texts)
        simple: dict[str, str] = {}
        for text, offer in zip(texts, parsed, strict=True):
            for key in (f"{offer.type}/{offer.subtype}", f"{offer.type}/*", "*/*"):
                simple.setdefault(key, text)
        object.__setattr__(self, "texts", texts)
        object.__setattr__(self, "parsed", parsed)
        object.__setattr__(self, "profiles", frozenset(
            o.params["profile"] for o in parsed if "profile" in o.params))
        object.__setattr__(self, "simple", MappingProxyType(simple))

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self.texts[index]


def _matches(rng: MediaRange, offer: MediaRange, profiles: frozenset[str]) -> bool:
    if rng.type not in ("*", offer.type) or rng.subtype not in ("*", offer.subtype):
        return False
    for name, value in rng.params.items():
        if name == "charset":
            ok = value.lower() in _UTF8
        elif name == "profile" and not profiles.intersection(value.split()):
            ok = True                       # a profile this server does not offer
        elif name == "profile":
            ok = offer.params.get("profile") in value.split()
        else:
            ok = offer.params.get(name, "").lower() == value.lower()
        if not ok:
            return False
    return True


def _rank(offer: MediaRange, ranges: Sequence[MediaRange], profiles: frozenset[str]
          ) -> tuple[float, tuple[bool, bool, int]]:
    """(q, specificity) of the most specific range matching ``offer``; q 0 if none."""
    best: tuple[tuple[bool, bool, int], float] | None = None
    for rng in ranges:
        if _matches(rng, offer, profiles):
            rank = (rng.specificity, rng.q)
            best = rank if best is None or rank > best else best
    return (best[1], best[0]) if best else (0.0, (False, False, 0))


def negotiate(accept: str | None, offered: Sequence[str], *, strict: bool = False
              ) -> str | None:
    """The best of ``offered`` for an ``Accept`` value (RFC 7231 section 5.3.2).

    The most specific range matching an offer gives it its q (so ``q=0`` on an
    exact type excludes it whatever the wildcards say). The highest q > 0 wins;
    at equal q, the offer matched by an exact type beats one matched by
    ``type/*``, which beats ``*/*``; then the first offer. A missing or empty
    Accept accepts anything: the first offer. None if nothing is acceptable.
    ``strict``: a malformed element raises ``InvalidHeaderError``; else it is
    skipped, and an Accept with no well-formed element counts as absent.
    """
    if not offered:
        return None
    if accept and isinstance(offered, Offers):
        # One bare range, q=1 (the usual Accept): every offer it matches ranks
        # the same, so the first one wins.
        hit = offered.simple.get(accept.strip().lower())
        if hit is not None:
            return hit
    ranges = parse_accept(accept, strict=strict)
    if not ranges:
        return offered[0]
    offers = offered if isinstance(offered, Offers) else Offers(offered)
    best, best_rank = None, (0.0, (False, False, 0))
    for text, offer in zip(offers.texts, offers.parsed, strict=True):
        rank = _rank(offer, ranges, offers.profiles)
        if rank[0] > 0 and rank > best_rank:
            best, best_rank = text, rank
    return best


def is_media_type(value: str) -> bool:
    """Whether ``value`` is a media type with its parameters (RFC 7231 section
    3.1.1.1: ``type/subtype *( ";" name=value )``; empty parameters are allowed)."""
    head, *params = split(value, ";")
    mtype, slash, sub = head.partition("/")
    if not (slash and TOKEN.fullmatch(mtype) and TOKEN.fullmatch(sub)):
        return False
    return all(not p or param_problem(p) is None for p in params)


def parameter(media_type: str, name: str) -> str | None:
    """The value of a parameter of a media type (name case-insensitive), or None."""
    for item in split(media_type, ";")[1:]:
        pname, value = param(item)
        if pname == name.lower():
            return value
    return None
