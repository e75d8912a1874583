"""The tokens HTTP header fields are made of (RFC 7230 section 3.2.6, RFC 7231
section 5.3.1, RFC 8187): lists, parameters, quoted strings, q-values,
``ext-value``. Pure functions shared by ``headers`` and ``mediatypes``.
"""
from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote_to_bytes

#: ``token`` (RFC 7230 section 3.2.6).
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: A parameter value: a token or a quoted-string.
PARAM_VALUE = re.compile(r'[!#$%&\'*+.^_`|~0-9A-Za-z-]+|"(?:[^"\\]|\\.)*"')
_QVALUE = re.compile(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?")


def split(text: str, sep: str, *, brackets: bool = False, escapes: bool = True) -> list[str]:
    """Split at ``sep`` outside quoted strings (and ``<...>`` if ``brackets``); strip parts."""
    if '"' not in text and not (brackets and "<" in text):    # nothing to skip over
        return [part.strip() for part in text.split(sep)]
    return split_chars(text, sep, brackets=brackets, escapes=escapes)


def split_chars(text: str, sep: str, *, brackets: bool = False,
                escapes: bool = True) -> list[str]:
    """``split``, character by character (what ``split`` does when the text holds
    a quoted string or, with ``brackets``, a ``<``)."""
    parts: list[str] = []
    buf: list[str] = []
    quoted = angle = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif quoted:
            escaped = escapes and ch == "\\"
            quoted = ch != '"'
        elif angle:
            angle = ch != ">"
        elif ch == '"':
            quoted = True
        elif brackets and ch == "<":
            angle = True
        elif ch == sep:
            parts.append("".join(buf).strip())
            buf = []
            continue
        buf.append(ch)
    parts.append("".join(buf).strip())
    return parts


def unquote_string(value: str) -> str:
    """The content of a quoted-string (RFC 7230 section 3.2.6), or ``value`` stripped."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def param(text: str) -> tuple[str, str | None]:
    """``name [BWS "=" BWS value]`` -> (lower-cased name, unquoted value or None)."""
    name, sep, value = text.partition("=")
    return name.strip().lower(), (unquote_string(value) if sep else None)


def param_problem(text: str) -> str | None:
    """Why ``name=value`` is not a parameter (RFC 7231 section 3.1.1.1), or None."""
    name, eq, value = text.partition("=")
    if not eq:
        return f"parameter {text!r} has no '=' and value"
    if not TOKEN.fullmatch(name.strip()):
        return f"parameter name {name.strip()!r} is not a token"
    if not PARAM_VALUE.fullmatch(value.strip()):
        return (f"the value of parameter {name.strip()!r} is neither a token nor a "
                "quoted string (check the quotes)")
    return None


def quote_string(value: str) -> str:
    """A quoted-string; refuses control characters (header injection)."""
    if any(unicodedata.category(c) == "Cc" and c != "\t" for c in value):
        raise ValueError(f"Control character in header value: {value!r}")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def qvalue(value: str | None) -> float | None:
    """A qvalue (RFC 7231 section 5.3.1), or None if malformed."""
    if value is None or not _QVALUE.fullmatch(value):
        return None
    return float(value)


def ext_value(value: str) -> str:
    """RFC 5987 / 8187 ``ext-value`` in UTF-8."""
    return "UTF-8''" + quote(value, safe="!#$&+^`|~")


def decode_ext_value(value: str | None) -> str | None:
    """Decode an RFC 5987 / 8187 ``ext-value``; None if malformed."""
    m = re.fullmatch(r"([A-Za-z0-9!#$%&+^_`{}~-]+)'[A-Za-z0-9-]*'(.*)", value or "")
    if not m or m[1].lower() not in ("utf-8", "iso-8859-1"):
        return None
    try:
        return unquote_to_bytes(m[2]).decode(m[1])
    except UnicodeDecodeError:
        return None
