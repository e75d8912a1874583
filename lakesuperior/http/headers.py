"""HTTP header logic as pure functions: no Flask, no I/O.

The HTTP layer passes raw header values in and gets plain values (or a status
code) back, in the spirit of Flask's "sansio" split. Parsers are lenient where
the RFCs allow it: unparseable parts are ignored, as the RFCs ask of recipients.
Where a request cannot be answered as meant without the header (``Accept``,
``Prefer``, ``Accept-Datetime``), a value that does not follow the grammar raises
``InvalidHeaderError`` saying why. The tokens are in ``http.grammar``, media types
and ``Accept`` in ``http.mediatypes`` (import them from there).
"""
from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Literal, TypeGuard
from urllib.parse import quote, unquote

from lakesuperior.exceptions import (
    InvalidDigestError,
    InvalidHeaderError,
    RangeNotSatisfiableError,
    UnsupportedDigestError,
)
from lakesuperior.http import digests
from lakesuperior.http.grammar import TOKEN as _TOKEN
from lakesuperior.http.grammar import decode_ext_value as _decode_ext_value
from lakesuperior.http.grammar import ext_value as _ext_value
from lakesuperior.http.grammar import param as _param
from lakesuperior.http.grammar import param_problem as _param_problem
from lakesuperior.http.grammar import quote_string as _quote
from lakesuperior.http.grammar import qvalue as _qvalue
from lakesuperior.http.grammar import split as _split

# --- Prefer (RFC 7240, LDP 1.0 section 7.2) ----------------------------------

@dataclass(frozen=True)
class Preference:
    """One preference as sent: lower-cased name, value, parameters in order."""

    name: str
    value: str | None = None
    params: tuple[tuple[str, str | None], ...] = ()

    def param(self, name: str) -> str | None:
        """The first value of a parameter (name case-insensitive)."""
        return next((v for n, v in self.params if n == name.lower()), None)


@dataclass(frozen=True)
class Prefer:
    """The preferences of a request that this server understands, plus all of them raw."""

    return_: Literal["minimal", "representation"] | None = None
    include: frozenset[str] = frozenset()
    omit: frozenset[str] = frozenset()
    handling: Literal["strict", "lenient"] | None = None
    raw: tuple[Preference, ...] = ()

    def get(self, name: str) -> Preference | None:
        """A preference by name (case-insensitive)."""
        return next((p for p in self.raw if p.name == name.lower()), None)


def parse_prefer(header_values: Iterable[str], *, strict: bool = True) -> Prefer:
    """Parse ``Prefer`` header values (RFC 7240 section 2; LDP 1.0 section 7.2).

    Names are case-insensitive; the first instance of a repeated preference
    wins (RFC 7240 section 2). ``include`` and ``omit`` are the space-separated
    URIs of the ``return=representation`` parameters (LDP 7.2.2). Preferences
    and values this server does not know are ignored (RFC 7240 section 2);
    ``strict``: what does not follow the grammar (a name that is not a token, an
    unbalanced quote, a value that is neither a token nor a quoted string)
    raises ``InvalidHeaderError`` saying why; else that preference is skipped.
    """
    if isinstance(header_values, str):
        header_values = [header_values]
    prefs: dict[str, Preference] = {}
    for header in header_values:
        for item in _split(header, ","):
            if not item:
                continue
            problem = _preference_problem(item)
            if problem:
                if strict:
                    raise InvalidHeaderError(f"Malformed Prefer header {item!r}: {problem}")
                continue
            head, *rest = _split(item, ";")
            name, value = _param(head)
            if name not in prefs:
                params = tuple(_param(p) for p in rest if p)
                prefs[name] = Preference(name, value, params)
    ret = prefs.get("return")
    return_ = ret.value.lower() if ret and ret.value else None
    if return_ not in ("minimal", "representation"):
        return_ = None
    include: frozenset[str] = frozenset()
    omit: frozenset[str] = frozenset()
    if ret and return_ == "representation":
        include = frozenset((ret.param("include") or "").split())
        omit = frozenset((ret.param("omit") or "").split())
    hand = prefs.get("handling")
    handling = hand.value.lower() if hand and hand.value else None
    if handling not in ("strict", "lenient"):
        handling = None
    return Prefer(return_, include, omit, handling,  # type: ignore[arg-type]
                  tuple(prefs.values()))


def _preference_problem(item: str) -> str | None:
    """Why one element of ``Prefer`` is not ``token [= word] *(; token [= word])``."""
    if _unbalanced(item):
        return "a quoted string is not closed"
    for i, part in enumerate(_split(item, ";")):
        if not part and i:
            continue
        name, eq, _ = part.partition("=")
        if not _TOKEN.fullmatch(name.strip()):
            what = "a parameter name" if i else "a preference name"
            return f"{name.strip()!r} is not {what} (a token)"
        if eq and (problem := _param_problem(part)):
            return problem
    return None


def _unbalanced(text: str) -> bool:
    """Whether a quoted string in ``text`` is left open."""
    quoted = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
    return quoted


def preference_applied(prefer: Prefer) -> str:
    """``Preference-Applied`` value for the understood preferences (RFC 7240 section 3).

    Applied preferences carry no parameters; empty string if none applied.
    """
    applied = [f"return={prefer.return_}" if prefer.return_ else "",
               f"handling={prefer.handling}" if prefer.handling else ""]
    return ", ".join(a for a in applied if a)


# --- Link (RFC 8288) ---------------------------------------------------------

@dataclass(frozen=True)
class Link:
    """One link: target URI, relation types (lower-cased), other parameters."""

    uri: str
    rel: frozenset[str] = frozenset()
    params: Mapping[str, str] = field(default_factory=dict, hash=False)

    def has_rel(self, rel: str) -> bool:
        """Relation types compare case-insensitively (RFC 8288 sections 2.1.1, 2.1.2)."""
        return rel.lower() in self.rel


def parse_link(header_values: Iterable[str]) -> list[Link]:
    """Parse ``Link`` header values (RFC 8288 section 3).

    Several links per value; commas and semicolons inside ``<>`` or quotes are
    kept. Only the first ``rel`` counts (section 3.3); other parameters keep
    their first value; ``name*`` values are decoded (RFC 8187). Malformed links
    are skipped.
    """
    if isinstance(header_values, str):
        header_values = [header_values]
    links = []
    for header in header_values:
        for item in _split(header, ",", brackets=True):
            end = item.find(">")
            if not item.startswith("<") or end < 0:
                continue
            head, *rest = _split(item[end + 1:], ";")
            if head:
                continue
            rel: frozenset[str] | None = None
            params: dict[str, str] = {}
            for name, value in (_param(p) for p in rest if p):
                if name == "rel":
                    if rel is None:
                        rel = frozenset((value or "").lower().split())
                elif name and name not in params:
                    if name.endswith("*"):
                        value = _decode_ext_value(value) or value
                    params[name] = value or ""
            links.append(Link(item[1:end].strip(), rel or frozenset(), params))
    return links


def format_link(uri: str, rel: str | Iterable[str], **params: str) -> str:
    """A ``Link`` value: ``<uri>; rel="..."; name="value"`` (RFC 8288 section 3).

    Non-ASCII and characters not allowed in a URI are percent-encoded
    (RFC 3987 section 3.1); a non-ASCII parameter value is sent as ``name*``
    (RFC 8187). A trailing ``_`` in a parameter name is dropped (``type_``).
    """
    target = quote(uri, safe="!#$%&'()*+,/:;=?@[]~")
    rels = rel if isinstance(rel, str) else " ".join(rel)
    parts = [f"<{target}>", f"rel={_quote(rels)}"]
    for name, value in params.items():
        name = name.rstrip("_")
        if value.isascii():
            parts.append(f"{name}={_quote(value)}")
        else:
            parts.append(f"{name}*={_ext_value(value)}")
    return "; ".join(parts)


# --- ETags and preconditions (RFC 7232) --------------------------------------

_ETAG = re.compile(r'(W/)?"([\x21\x23-\x7e\x80-\xff]*)"')


def make_etag(value: str, weak: bool = False) -> str:
    """An entity-tag (RFC 7232 section 2.3): ``"value"`` or ``W/"value"``."""
    if not re.fullmatch(r"[\x21\x23-\x7e]*", value):
        raise ValueError(f"Not a valid entity-tag value: {value!r}")
    return f'{"W/" if weak else ""}"{value}"'


def parse_etags(header: str) -> list[tuple[str, bool]] | Literal["*"]:
    """``If-Match`` / ``If-None-Match``: ``"*"`` or [(opaque value, weak)] (RFC 7232 3.1, 3.2).

    Malformed entity-tags (e.g. unquoted) are skipped.
    """
    if header.strip() == "*":
        return "*"
    tags = []
    for item in _split(header, ",", escapes=False):
        if m := _ETAG.fullmatch(item):
            tags.append((m[2], bool(m[1])))
    return tags


def _current_etag(etag: str) -> tuple[str, bool]:
    """The representation's tag, given formatted (``W/"x"``) or bare (``x``, strong)."""
    if m := _ETAG.fullmatch(etag.strip()):
        return m[2], bool(m[1])
    return etag, False


def _etag_matches(tags: list[tuple[str, bool]] | Literal["*"],
                  current: tuple[str, bool] | None, exists: bool, strong: bool) -> bool:
    """Strong or weak comparison (RFC 7232 section 2.3.2) against any listed tag."""
    if isinstance(tags, str):
        return exists
    if current is None:
        return False
    value, weak = current
    return any(v == value and not (strong and (w or weak)) for v, w in tags)


def _present(header: str | None) -> TypeGuard[str]:
    return header is not None and header.strip() != ""


def _to_second(dt: datetime) -> datetime:
    """UTC, truncated to the second: HTTP dates have no fractions."""
    dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    return dt.replace(microsecond=0)


def evaluate_preconditions(
    method: str, *, exists: bool, etag: str | None = None,
    last_modified: datetime | None = None, if_match: str | None = None,
    if_none_match: str | None = None, if_modified_since: str | None = None,
    if_unmodified_since: str | None = None, weak_if_match: bool = False,
) -> int | None:
    """Evaluate conditional headers in the order of RFC 7232 section 6.

    Returns None (proceed), 304 or 412. ``etag`` is the current
    representation's entity-tag (formatted or bare), ``exists`` whether there
    is one. Blank headers count as absent; bad dates are ignored (3.3, 3.4).
    Per section 5 the caller applies this only where the unconditional response
    would be 2xx or 412.

    ``weak_if_match`` compares ``If-Match`` tags weakly. RFC 7232 section 3.1
    asks for the strong comparison, which no weak tag ever passes; a server
    whose only validators are weak (LDP RDF sources, LDP 4.2.1.3) and whose
    clients send them back in ``If-Match`` (LDP 4.2.4.5) can opt in to the
    weak comparison, as the W3C LDP test suite expects.
    """
    safe = method.upper() in ("GET", "HEAD")
    current = _current_etag(etag) if exists and etag is not None else None
    modified = _to_second(last_modified) if exists and last_modified is not None else None
    # 1. If-Match, strong comparison (3.1); else 2. If-Unmodified-Since (3.4)
    if _present(if_match):
        if not _etag_matches(parse_etags(if_match), current, exists,
                             strong=not weak_if_match):
            return 412
    elif _present(if_unmodified_since):
        date = parse_http_date(if_unmodified_since)
        if date is not None and modified is not None and modified > date:
            return 412
    # 3. If-None-Match, weak comparison (3.2); else 4. If-Modified-Since (3.3)
    if _present(if_none_match):
        if _etag_matches(parse_etags(if_none_match), current, exists, strong=False):
            return 304 if safe else 412
    elif safe and _present(if_modified_since):
        date = parse_http_date(if_modified_since)
        if date is not None and modified is not None and modified <= date:
            return 304
    return None


# --- Digest and Want-Digest (RFC 3230, RFC 5843) -----------------------------

_HTTP_DIGEST_NAMES = MappingProxyType({**digests.HTTP_NAMES, "sha": "sha"})


def parse_digest(header: str, *, strict: bool = False) -> dict[str, str]:
    """``Digest: sha-256=<base64>, md5=<base64>`` -> {lower-cased algorithm: value}.

    RFC 3230 section 4.3.2. Values are kept as sent; unknown algorithms are
    kept for the caller to reject. The first instance of an algorithm wins.
    Leniently, an entry without ``=`` gets an empty value and one without a name
    is skipped; ``strict`` (a request's header, which guards what is stored)
    raises ``InvalidDigestError`` for those, for a name that is not a token and
    for a header with no digest at all. Empty list elements are allowed (RFC 7230
    section 7).
    """
    digests: dict[str, str] = {}
    for item in header.split(","):
        if strict and item.strip():
            _check_digest_item(item)
        name, _, value = item.partition("=")
        name = name.strip().lower()
        if name:
            digests.setdefault(name, value.strip())
    if strict and not digests:
        raise InvalidDigestError(f"Malformed Digest header {header!r}: it holds no "
                                 "algorithm=value digest")
    return digests


def _check_digest_item(item: str) -> None:
    name, eq, value = item.partition("=")
    name, value = name.strip(), value.strip()
    problem = ("it has no '=' between algorithm and value" if not eq
               else "an algorithm name is missing" if not name
               else f"{name!r} is not an algorithm name (a token)"
               if not _TOKEN.fullmatch(name)
               else f"the {name} value is empty" if not value
               else "")
    if problem:
        raise InvalidDigestError(f"Malformed Digest header entry {item.strip()!r}: {problem}")


def parse_want_digest(header: str) -> list[str]:
    """``Want-Digest`` (RFC 3230 section 4.3.1): algorithms by falling q-value.

    Names are lower-cased; q=0 and malformed q-values are dropped; ties keep
    the header order.
    """
    wanted: dict[str, float] = {}
    for item in header.split(","):
        head, *params = item.split(";")
        name = head.strip().lower()
        q: float | None = 1.0
        for p in params:
            pname, value = _param(p)
            if pname == "q":
                q = _qvalue(value)
        if name and q and name not in wanted:
            wanted[name] = q
    return sorted(wanted, key=lambda n: -wanted[n])


def format_digest(digests: Mapping[str, str]) -> str:
    """``Digest`` value from {algorithm: hex}: base64 per RFC 3230 section 4.1.1.

    Algorithm names may be hashlib (``sha256``) or HTTP (``SHA-256``) spellings;
    they are sent as ``md5``, ``sha``, ``sha-256``, ``sha-512`` (RFC 5843).
    """
    parts = []
    for algo, hex_value in digests.items():
        name = _HTTP_DIGEST_NAMES.get(algo.strip().lower().replace("-", ""))
        if name is None:
            raise UnsupportedDigestError(f"Unsupported digest algorithm: {algo!r}")
        try:
            raw = bytes.fromhex(hex_value)
        except ValueError:
            raise InvalidDigestError(f"Not a hex digest: {hex_value!r}") from None
        parts.append(f"{name}={base64.b64encode(raw).decode('ascii')}")
    return ", ".join(parts)


# --- Range (RFC 7233) ---------------------------------------------------------

_BYTE_RANGE = re.compile(r"([0-9]*)-([0-9]*)")


def parse_range(header: str, size: int) -> list[tuple[int, int]] | None:
    """Byte ranges (RFC 7233 section 2.1) as inclusive (start, end), clipped to ``size``.

    None means "ignore the header" (section 3.1): not ``bytes``, or a
    syntactically invalid range anywhere in it, or only suffix ranges of an
    empty representation. Unsatisfiable ranges are dropped; if none remains,
    ``RangeNotSatisfiableError`` (416). Ranges keep the request's order.
    """
    unit, sep, spec = header.partition("=")
    if not sep or unit.strip().lower() != "bytes":
        return None
    items = [i.strip() for i in spec.split(",")]
    if not any(items):
        return None
    ranges: list[tuple[int, int]] = []
    empty_suffix = False
    for item in filter(None, items):
        m = _BYTE_RANGE.fullmatch(item)
        if not m or not (m[1] or m[2]):
            return None
        if m[1]:
            first, last = int(m[1]), int(m[2]) if m[2] else size - 1
            if m[2] and last < first:
                return None
            if first < size:
                ranges.append((first, min(last, size - 1)))
        elif (length := int(m[2])) > 0:
            if size:
                ranges.append((max(size - length, 0), size - 1))
            else:
                empty_suffix = True
    if not ranges:
        if empty_suffix:
            return None
        raise RangeNotSatisfiableError(size)
    return ranges


def content_range(start: int, end: int, size: int) -> str:
    """``Content-Range: bytes start-end/size`` (RFC 7233 section 4.2)."""
    if not 0 <= start <= end < size:
        raise ValueError(f"Bad range {start}-{end} for length {size}")
    return f"bytes {start}-{end}/{size}"


def unsatisfied_content_range(size: int) -> str:
    """``Content-Range: bytes */size`` for a 416 response (RFC 7233 section 4.4)."""
    return f"bytes */{size}"


# --- Dates (RFC 7231 section 7.1.1.1, RFC 7089) -------------------------------

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_LONG_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun",
           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAY, _WEEKDAY = f"(?:{'|'.join(_DAYS)})", f"(?:{'|'.join(_LONG_DAYS)})"
_MON = f"({'|'.join(_MONTHS)})"
_TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})"
# A one-digit day and a numeric zone are read too (as by Fedora's RFC 1123 parser).
_IMF_FIXDATE = re.compile(
    f"(?:{_DAY}, )?([0-9]{{1,2}}) {_MON} ([0-9]{{4}}) {_TIME} (GMT|[+-][0-9]{{4}})")
_RFC850_DATE = re.compile(f"{_WEEKDAY}, ([0-9]{{1,2}})-{_MON}-([0-9]{{2}}) {_TIME} GMT")
_ASCTIME_DATE = re.compile(f"{_DAY} {_MON} ([0-9]{{2}}| [0-9]|[0-9]) {_TIME} ([0-9]{{4}})")


def format_http_date(dt: datetime) -> str:
    """IMF-fixdate, e.g. ``Sun, 06 Nov 1994 08:49:37 GMT``; naive means UTC."""
    d = _to_second(dt)
    return (f"{_DAYS[d.weekday()]}, {d.day:02d} {_MONTHS[d.month - 1]} {d.year:04d} "
            f"{d.hour:02d}:{d.minute:02d}:{d.second:02d} GMT")


def _http_date(text: str, now: datetime | None) -> datetime | str:
    """The aware UTC datetime of an HTTP-date, or why ``text`` is not one."""
    zone = "GMT"
    if m := _IMF_FIXDATE.fullmatch(text):
        day, month, year, hh, mm, ss, zone = m.groups()
    elif m := _RFC850_DATE.fullmatch(text):
        day, month, yy, hh, mm, ss = m.groups()
        this_year = (now or datetime.now(UTC)).year
        year = str(this_year - this_year % 100 + int(yy))
        if int(year) > this_year + 50:
            year = str(int(year) - 100)
    elif m := _ASCTIME_DATE.fullmatch(text):
        month, day, hh, mm, ss, year = m.groups()
    else:
        return ("it is in none of the HTTP date forms (RFC 7231 section 7.1.1.1); "
                "send an IMF-fixdate such as 'Sun, 06 Nov 1994 08:49:37 GMT'")
    try:
        when = datetime(int(year), _MONTHS.index(month) + 1, int(day), int(hh), int(mm),
                        min(int(ss), 59), tzinfo=UTC)
    except ValueError as e:
        return f"it names no calendar date and time ({e})"
    if zone != "GMT":
        sign = 1 if zone[0] == "+" else -1
        when -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[3:]))
    return when


def parse_http_date(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """An HTTP-date in any of its three formats, as aware UTC; None if invalid.

    RFC 7231 section 7.1.1.1: IMF-fixdate, rfc850-date (a two-digit year more
    than 50 years ahead of ``now`` is taken from the past century) and asctime,
    read leniently: a one-digit day, an IMF-fixdate without its weekday or with
    a ``+hhmm`` zone. Leap seconds become :59.
    """
    text = value.strip() if isinstance(value, str) else ""
    when = _http_date(text, now)
    return when if isinstance(when, datetime) else None


def parse_accept_datetime(value: str | None, *, now: datetime | None = None
                          ) -> datetime | None:
    """Memento ``Accept-Datetime`` (RFC 7089 section 2.1.1): an HTTP-date read as
    ``parse_http_date`` does; None if absent or blank; ``InvalidHeaderError``
    saying why for anything else."""
    text = (value or "").strip()
    if not text:
        return None
    when = _http_date(" ".join(text.split()), now)
    if isinstance(when, str):
        raise InvalidHeaderError(f"Accept-Datetime {text!r} is not an HTTP date: {when}")
    return when


# --- Content-Disposition (RFC 6266, RFC 5987) --------------------------------

def _ascii_fallback(name: str) -> str:
    """ASCII stand-in for ``filename``: accents dropped, other non-ASCII and ``%\\`` as ``_``."""
    out = []
    for ch in unicodedata.normalize("NFKD", name):
        if unicodedata.combining(ch):
            continue
        out.append(ch if ch.isascii() and ch not in "%\\" else "_")
    return "".join(out)


def content_disposition(filename: str, inline: bool = False) -> str:
    """``Content-Disposition`` value (RFC 6266 section 4).

    Control characters are removed. When the name is not plain ASCII (or has
    ``%`` or ``\\``, see RFC 6266 appendix D) an ASCII ``filename`` is followed by
    ``filename*=UTF-8''...`` (RFC 5987), which recipients prefer.
    """
    name = "".join(c for c in filename if unicodedata.category(c) != "Cc")
    fallback = _ascii_fallback(name)
    value = f"{'inline' if inline else 'attachment'}; filename={_quote(fallback)}"
    if fallback != name:
        value += f"; filename*={_ext_value(name)}"
    return value


def parse_content_disposition(header: str | None) -> str | None:
    """The file name of a ``Content-Disposition`` value; ``filename*`` wins (RFC 6266 4.3).

    Returned as sent (path parts included): use it as metadata, not as a path.
    """
    if not header:
        return None
    head, *rest = _split(header, ";")
    if not _TOKEN.fullmatch(head):
        return None
    plain = ext = None
    for name, value in (_param(p) for p in rest if p):
        if name == "filename*" and ext is None:
            ext = _decode_ext_value(value)
        elif name == "filename" and plain is None:
            plain = value
    return ext or plain or None


# --- Slug (RFC 5023 section 9.7) ------------------------------------------------

def parse_slug(value: str | None) -> str | None:
    """A ``Slug`` value as one path segment, or None if nothing usable is left.

    Percent-decoded as UTF-8 (RFC 5023 section 9.7) and NFC-normalized;
    control characters refuse the slug; surrounding blanks and ``/`` are
    stripped, inner ``/`` and ``\\`` become ``_``; ``.`` and ``..`` are refused.
    Other characters are kept: percent-encode the segment when building a URI.
    """
    if not value:
        return None
    try:
        text = unquote(value, errors="strict")
    except UnicodeDecodeError:
        return None
    text = unicodedata.normalize("NFC", text)
    if any(unicodedata.category(c) == "Cc" for c in text):
        return None
    text = text.strip().strip("/").strip().replace("/", "_").replace("\\", "_")
    return None if text in ("", ".", "..") else text
