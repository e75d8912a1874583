"""RDF terms as canonical N-Triples strings, and their content-derived ids.

See ``terms.pyi`` for the term syntax. An id is ``kind << 62 | hash62``: the
kind in the two top bits, then 62 bits of a 64-bit FNV-1a hash of the
canonical UTF-8 bytes, finished with the splitmix64 mixer.
"""
import re

from libc.stdint cimport uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memchr, memcmp

from lakesuperior.exceptions import TermError

KIND_IRI = TERM_IRI
KIND_BNODE = TERM_BNODE
KIND_LITERAL = TERM_LITERAL

cdef uint64_t KIND_MASK = (<uint64_t>3) << KIND_SHIFT
cdef uint64_t HASH_MASK = ~KIND_MASK

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

# Characters an IRI may not hold (N-Triples IRIREF), and the escapes of literals.
_IRI_BAD = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_LANG = re.compile(r"[a-zA-Z]+(-[a-zA-Z0-9]+)*\Z")
_BNODE = re.compile(r"[A-Za-z0-9_\u00C0-\uFFFF]([A-Za-z0-9_\-.\u00B7\u00C0-\uFFFF]*"
                    r"[A-Za-z0-9_\-\u00B7\u00C0-\uFFFF])?\Z")
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f\ufffe\uffff]')
_UCHAR = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.S)
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f",
           '"': '"', "'": "'", "\\": "\\"}


def _escape_table():
    table = {i: "\\u%04X" % i for i in range(0x20)}
    table.update({0x7F: "\\u007F", 0xFFFE: "\\uFFFE", 0xFFFF: "\\uFFFF"})
    table.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n",
                  ord("\r"): "\\r", ord("\t"): "\\t", ord("\b"): "\\b",
                  ord("\f"): "\\f"})
    return table


_ESCAPES = _escape_table()


cdef uint64_t hash_bytes(const unsigned char *data, size_t size) noexcept nogil:
    """FNV-1a 64 with a splitmix64 finish (good avalanche for short keys)."""
    cdef uint64_t h = 0xcbf29ce484222325ULL
    cdef size_t i
    for i in range(size):
        h ^= data[i]
        h *= 0x100000001b3ULL
    h ^= h >> 30
    h *= 0xbf58476d1ce4e5b9ULL
    h ^= h >> 27
    h *= 0x94d049bb133111ebULL
    h ^= h >> 31
    return h


cpdef int kind_of(str term) except -1:
    """The kind of a canonical term (``KIND_*``)."""
    if not term:
        raise TermError("An empty string is not an RDF term")
    cdef Py_UCS4 c = term[0]
    if c == u"<":
        return KIND_IRI
    if c == u'"':
        return KIND_LITERAL
    if c == u"_":
        return KIND_BNODE
    raise TermError(f"Not an RDF term: {term[:80]!r}")


cpdef uint64_t term_id(str term) except? 0:
    """The content-derived id of a canonical term (no database access)."""
    cdef int kind = kind_of(term)
    return id_of_utf8(kind, _utf8(term))


cdef uint64_t id_of_utf8(int kind, bytes data) noexcept:
    """The id of a canonical term given as UTF-8 bytes."""
    cdef uint64_t h = hash_bytes(<const unsigned char *>PyBytes_AS_STRING(data),
                                 PyBytes_GET_SIZE(data))
    return ((<uint64_t>kind) << KIND_SHIFT) | (h & HASH_MASK)


cdef bytes _utf8(str term):
    try:
        return term.encode("utf-8")
    except UnicodeEncodeError:
        raise TermError(f"Not valid Unicode (lone surrogate): {term[:80]!r}") from None


cdef inline int _hex_upper(unsigned char c) noexcept nogil:
    """Value of an upper-case hex digit, or -1 (canonical escapes are upper case)."""
    if 48 <= c <= 57:
        return c - 48
    if 65 <= c <= 70:
        return c - 55
    return -1


cdef Py_ssize_t _canonical_escape(const unsigned char *p, Py_ssize_t room) noexcept nogil:
    """Length of the canonical escape at ``p`` (``\\"``, ``\\\\``, ``\\b \\t \\n \\f
    \\r``, or ``\\uXXXX`` of a character canonical form escapes so: another
    control character, U+007F, U+FFFE, U+FFFF); 0 if not canonical. ``room``:
    bytes after ``p`` before the closing quote."""
    cdef unsigned char d
    cdef int k, h
    cdef unsigned int cp = 0
    if room < 1:
        return 0
    d = p[1]
    if d == 34 or d == 92 or d == 98 or d == 116 or d == 110 or d == 102 or d == 114:
        return 2
    if d != 117 or room < 5:
        return 0
    for k in range(2, 6):
        h = _hex_upper(p[k])
        if h < 0:
            return 0
        cp = (cp << 4) | <unsigned int>h
    if (cp < 0x20 and cp not in (8, 9, 10, 12, 13)) or cp == 0x7F or cp == 0xFFFE or (
            cp == 0xFFFF):
        return 6
    return 0


cdef bytes canonical_utf8(str term, int *kind):
    """UTF-8 bytes of the canonical form of ``term``; sets ``kind``.

    The fast path checks the encoded bytes of a plain literal in one C loop
    (escapes already in canonical form pass); any term needing more work goes
    through ``canonical()``.
    """
    cdef bytes data
    cdef const unsigned char *buf
    cdef Py_ssize_t i = 1, n, esc
    cdef unsigned char c
    if term and term[0] == u'"':
        data = _utf8(term)
        buf = <const unsigned char *>PyBytes_AS_STRING(data)
        n = PyBytes_GET_SIZE(data)
        while i < n:
            c = buf[i]
            if c == 34:   # the closing quote
                if i == n - 1:
                    kind[0] = KIND_LITERAL
                    return data
                break
            if c == 92:   # an escape: kept only if canonical (and not the last byte)
                esc = _canonical_escape(buf + i, n - 1 - i)
                if not esc:
                    break
                i += esc
                continue
            if c < 0x20 or c == 0x7F:
                break
            if c == 0xEF and i + 2 < n and buf[i + 1] == 0xBF and buf[i + 2] >= 0xBE:
                break     # U+FFFE / U+FFFF (UTF-8 EF BF BE / EF BF BF): escaped
            i += 1
    cdef str canon = canonical(term)
    kind[0] = kind_of(canon)
    return _utf8(canon) if canon is not term else (data if term[0] == u'"' else _utf8(canon))


def id_kind(uint64_t tid):
    """The kind encoded in an id."""
    return <int>(tid >> KIND_SHIFT)


def _unescape(str text, str what):
    def repl(m):
        if m.group(1) or m.group(2):
            cp = int(m.group(1) or m.group(2), 16)
            if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                raise TermError(f"Invalid code point escape in {what}")
            return chr(cp)
        ch = m.group(3)
        if what == "IRI" or ch not in _ECHARS:
            raise TermError(f"Invalid escape \\{ch} in {what}")
        return _ECHARS[ch]
    return _UCHAR.sub(repl, text)


cdef str _check_iri(str value):
    if "\\" in value:
        value = _unescape(value, "IRI")
    m = _IRI_BAD.search(value)
    if m is not None:
        raise TermError(f"Character {m.group()!r} is not allowed in an IRI: {value[:80]!r}")
    if ":" not in value:
        raise TermError(f"IRI is not absolute (no scheme): {value[:80]!r}")
    return value


def iri(str value):
    """Build a canonical IRI term from a bare IRI (validated)."""
    return "<" + _check_iri(value) + ">"


def literal(lex, lang=None, datatype=None):
    """Build a canonical literal term from its parts (``datatype`` is a bare IRI)."""
    if not isinstance(lex, str):
        raise TermError(f"A literal's lexical form must be a str, not {type(lex).__name__}")
    quoted = '"' + (lex.translate(_ESCAPES) if _NEEDS_ESCAPE.search(lex) else lex) + '"'
    if lang is not None:
        if datatype not in (None, RDF_LANGSTRING):
            raise TermError("A literal cannot have both a language and a datatype")
        if not _LANG.match(lang):
            raise TermError(f"Invalid language tag: {lang!r}")
        return quoted + "@" + lang.lower()
    if datatype is None or datatype == XSD_STRING:
        return quoted
    if datatype == RDF_LANGSTRING:
        raise TermError("rdf:langString needs a language tag")
    return quoted + "^^<" + _check_iri(datatype) + ">"


def literal_parts(str term):
    """``(lexical, lang, datatype)`` of a canonical literal."""
    if not term.startswith('"'):
        raise TermError(f"Not a literal: {term[:80]!r}")
    cdef Py_ssize_t end = _closing_quote(term)
    lex = term[1:end]
    if "\\" in lex:
        lex = _unescape(lex, "literal")
    rest = term[end + 1:]
    if not rest:
        return lex, None, None
    if rest[0] == "@" and _LANG.match(rest, 1):
        return lex, rest[1:], None
    if rest.startswith("^^<") and rest.endswith(">") and len(rest) > 4:
        return lex, None, rest[3:len(rest) - 1]
    raise TermError(f"Invalid literal suffix {rest[:40]!r} in {term[:80]!r}")


def lexical(str term):
    """The unescaped lexical form of a literal, or the IRI / blank node label."""
    cdef int kind = kind_of(term)
    if kind == KIND_IRI:
        return term[1:-1]
    if kind == KIND_BNODE:
        return term[2:]
    return literal_parts(term)[0]


cdef Py_ssize_t _closing_quote(str term) except -1:
    """Index of the quote that closes a literal's lexical form."""
    cdef Py_ssize_t i = 1, n = len(term)
    cdef Py_UCS4 c
    while i < n:
        c = term[i]
        if c == u"\\":
            i += 2
            continue
        if c == u'"':
            return i
        i += 1
    raise TermError(f"Unterminated literal: {term[:80]!r}")


cdef bint _plain_iri(str t) except -1:
    """True if ``<...>`` holds no character that needs checking or unescaping."""
    cdef Py_ssize_t i, n = len(t)
    cdef Py_UCS4 c
    cdef bint colon = False
    if n < 3 or t[n - 1] != u">":
        return False
    for i in range(1, n - 1):
        c = t[i]
        if c <= 0x20 or c == u"<" or c == u">" or c == u'"' or c == u"{" or c == u"}" \
                or c == u"|" or c == u"^" or c == u"`" or c == u"\\":
            return False
        if c == u":":
            colon = True
    return colon


cdef Py_ssize_t _plain_literal_end(str t) except? -2:
    """Index of the closing quote if the lexical form needs no escaping, else -1."""
    cdef Py_ssize_t i, n = len(t)
    cdef Py_UCS4 c
    for i in range(1, n):
        c = t[i]
        if c == u'"':
            return i
        if c < 0x20 or c == u"\\" or c == 0x7F or c == 0xFFFE or c == 0xFFFF:
            return -1
    return -1


cpdef str canonical(term):
    """Validate an N-Triples term and return its canonical form."""
    if not isinstance(term, str):
        raise TermError(f"An RDF term must be a str, not {type(term).__name__}")
    cdef str t = term
    cdef Py_ssize_t q
    if t:
        if t[0] == u"<" and _plain_iri(t):
            return t
        if t[0] == u'"':
            q = _plain_literal_end(t)
            if q > 0 and q == len(t) - 1:
                return t
    cdef int kind = kind_of(t)
    cdef Py_ssize_t end
    if kind == KIND_IRI:
        if len(t) < 3 or t[len(t) - 1] != u">":
            raise TermError(f"Unterminated IRI: {t[:80]!r}")
        return "<" + _check_iri(t[1:len(t) - 1]) + ">"
    if kind == KIND_BNODE:
        if not t.startswith("_:") or not _BNODE.match(t, 2):
            raise TermError(f"Invalid blank node label: {t[:80]!r}")
        return t
    end = _closing_quote(t)
    lex = t[1:end]
    has_escape = "\\" in lex
    if has_escape:
        lex = _unescape(lex, "literal")
    elif "\n" in lex or "\r" in lex:
        raise TermError("Raw line breaks are not allowed in an N-Triples literal")
    rest = t[end + 1:]
    if not rest:
        if not has_escape and not _NEEDS_ESCAPE.search(lex):
            return t
        return literal(lex)
    if rest[0] == "@":
        return literal(lex, lang=rest[1:])
    if rest.startswith("^^<") and rest.endswith(">") and len(rest) > 4:
        return literal(lex, datatype=rest[3:len(rest) - 1])
    raise TermError(f"Invalid literal suffix {rest[:40]!r} in {t[:80]!r}")


cdef inline bint _ends_with(const char *p, Py_ssize_t n, const char *tail,
                            Py_ssize_t k) noexcept nogil:
    return n >= k and memcmp(p + n - k, tail, k) == 0


cdef str _term(const char *p, Py_ssize_t n, const char *old, Py_ssize_t old_n, bytes new):
    """The term of ``n`` UTF-8 bytes at ``p``; with ``new``, an IRI under ``old`` (a
    term's text without its ``>``) moved under ``new`` (as ``split_ntriples`` says)."""
    cdef char c
    if new is not None and n > old_n and p[0] == b"<" and memcmp(p, old, old_n) == 0:
        c = p[old_n]
        if c == b"/":
            moved = new + p[old_n:n]
        elif c == b">" or c == b"#":
            moved = new + b"/" + p[old_n:n]
        else:
            return PyUnicode_DecodeUTF8(p, n, NULL)
        return PyUnicode_DecodeUTF8(PyBytes_AS_STRING(moved), PyBytes_GET_SIZE(moved), NULL)
    return PyUnicode_DecodeUTF8(p, n, NULL)


def split_ntriples(bytes data, str prefix=None, str replacement=None):
    """The distinct triples of canonical N-Triples text (pyoxigraph's output: one
    ``s p o .`` line each, single spaces, no comments), in their order, and whether
    an object is an RDF 1.2 form (``<<...>>`` or a ``--ltr`` / ``--rtl`` literal).
    A subject equal to the previous line's is the same ``str`` object.

    ``prefix`` (the text of an IRI term without its ``>``, e.g. ``<info:fedora``)
    and ``replacement``: a subject or object IRI that is ``prefix`` followed by
    ``/``, ``#`` or ``>`` (that IRI, its hash IRIs and the IRIs below it) gets
    ``replacement`` instead of ``prefix``, with a ``/`` before a ``#`` or ``>``
    (``<info:fedora>`` becomes ``replacement + "/>"``, ``<info:fedora/a>``
    ``replacement + "/a>"``); triples that become equal are listed once."""
    cdef const char *buf = PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i = 0, end, sp1, sp2, olen
    cdef const char *line
    cdef const char *last_s = NULL
    cdef Py_ssize_t last_slen = 0
    cdef bint rdf12 = False
    cdef object s = None, p, o, t
    cdef list out = []
    cdef set seen = set()
    cdef bytes old = None, new = None
    cdef const char *old_p = NULL
    cdef Py_ssize_t old_n = 0
    if (prefix is None) != (replacement is None):
        raise ValueError("Give both prefix and replacement, or neither")
    if prefix is not None:
        old, new = _utf8(prefix), _utf8(replacement)
        old_p, old_n = PyBytes_AS_STRING(old), PyBytes_GET_SIZE(old)
    while i < n:
        line = <const char *>memchr(buf + i, b"\n", n - i)
        end = (line - buf) if line != NULL else n
        line = buf + i
        if end - i >= 2 and line[end - i - 2] == b" " and line[end - i - 1] == b".":
            sp1 = 0
            while sp1 < end - i and line[sp1] != b" ":
                sp1 += 1
            sp2 = sp1 + 1
            while sp2 < end - i and line[sp2] != b" ":
                sp2 += 1
            olen = end - i - 2 - sp2 - 1
            if sp2 >= end - i or olen <= 0:
                raise ValueError(f"Not an N-Triples line: {data[i:min(end, i + 200)]!r}")
            if last_s == NULL or sp1 != last_slen or memcmp(line, last_s, sp1) != 0:
                s = _term(line, sp1, old_p, old_n, new)
                last_s = line
                last_slen = sp1
            p = PyUnicode_DecodeUTF8(line + sp1 + 1, sp2 - sp1 - 1, NULL)
            o = _term(line + sp2 + 1, olen, old_p, old_n, new)
            t = (s, p, o)
            if t not in seen:
                seen.add(t)
                out.append(t)
                if not rdf12 and (line[sp2 + 1] == b"<" and olen > 1 and line[sp2 + 2] == b"<"
                                  or _ends_with(line + sp2 + 1, olen, b"--ltr", 5)
                                  or _ends_with(line + sp2 + 1, olen, b"--rtl", 5)):
                    rdf12 = True
        elif end > i:
            raise ValueError(f"Not an N-Triples line: {data[i:min(end, i + 200)]!r}")
        i = end + 1
    return out, rdf12
