"""The synthetic graph of the benchmark workload (``WORKLOAD.md``).

One resource is ``size`` triples (200 by default), all about the resource
itself:

* ``size // 4`` links to 5 distinct external URIs, predicates
  ``http://ex.org/exturi_p#u0`` ... (50 for 200 triples);
* ``size // 4`` links to 5 distinct repository resources (``internal``),
  predicates ``http://ex.org/inturi_p#u0`` ...;
* the rest (100 for 200) are distinct random literals of 64 characters
  (printable ASCII, Latin-1, Latin Extended, Greek, Runic), two per predicate
  ``http://ex.org/lit_p#l0`` ....

The graph is made as predicate/object pairs of canonical N-Triples terms, then
rendered as triples, as a Turtle document about ``<>`` or as an rdflib Graph.
The same seed gives the same graphs. Nothing here touches a repository.
"""
from __future__ import annotations

import random
import re
from collections.abc import Sequence

import rdflib

__all__ = ["ALPHABET", "GRAPH_SIZE", "LITERAL_LENGTH", "EXTERNAL", "nt_literal",
           "workload_pairs", "workload_triples", "workload_turtle", "workload_graph",
           "random_bytes"]

_UNESCAPE = re.compile(r"\\(.)")

GRAPH_SIZE = 200
LITERAL_LENGTH = 64
EXTERNAL = tuple(f"http://example.edu/res/{i}" for i in range(5))
"""The 5 external resources every graph links to."""

# Printable characters of: ASCII, Latin-1 Supplement, Latin Extended-A/B, Greek, Runic.
ALPHABET = "".join(chr(c) for lo, hi in ((0x20, 0x7F), (0xA1, 0x100), (0x100, 0x250),
                                         (0x370, 0x400), (0x16A0, 0x16F1))
                   for c in range(lo, hi) if chr(c).isprintable())


def nt_literal(text: str) -> str:
    """A plain literal in canonical N-Triples form (the alphabet has no control
    characters, so only ``\\`` and ``"`` need escaping)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def workload_pairs(rng: random.Random, internal: Sequence[str],
                   size: int = GRAPH_SIZE) -> list[tuple[str, str]]:
    """The (predicate, object) pairs of one resource, as canonical terms.

    ``internal``: IRIs (bare, without angle brackets) of the repository
    resources to link to (5 in the standard workload).
    """
    if size < 4:
        raise ValueError("the graph size must be at least 4")
    if not internal:
        raise ValueError("at least one internal resource is needed")
    n_uri = size // 4
    pairs = []
    for i in range(n_uri):
        pairs.append((f"<http://ex.org/exturi_p#u{i}>", f"<{EXTERNAL[i % len(EXTERNAL)]}>"))
    for i in range(n_uri):
        pairs.append((f"<http://ex.org/inturi_p#u{i}>", f"<{internal[i % len(internal)]}>"))
    for i in range(size - 2 * n_uri):
        text = "".join(rng.choices(ALPHABET, k=LITERAL_LENGTH))
        pairs.append((f"<http://ex.org/lit_p#l{i // 2}>", nt_literal(text)))
    return pairs


def workload_triples(subject: str, internal: Sequence[str], rng: random.Random,
                     size: int = GRAPH_SIZE) -> list[tuple[str, str, str]]:
    """The triples of one resource about ``subject`` (a canonical IRI term, ``<...>``).

    ``internal`` may be given as bare IRIs or as ``<...>`` terms.
    """
    bare = [i[1:-1] if i.startswith("<") else i for i in internal]
    return [(subject, p, o) for p, o in workload_pairs(rng, bare, size)]


def workload_turtle(rng: random.Random, internal: Sequence[str],
                    size: int = GRAPH_SIZE) -> bytes:
    """The graph as a Turtle document about ``<>`` (UTF-8)."""
    lines = [f"<> {p} {o} ." for p, o in workload_pairs(rng, internal, size)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def workload_graph(rng: random.Random, internal: Sequence[str], subject: str,
                   size: int = GRAPH_SIZE) -> rdflib.Graph:
    """The graph as an rdflib Graph about ``subject`` (a bare IRI)."""
    g = rdflib.Graph()
    s = rdflib.URIRef(subject)
    for p, o in workload_pairs(rng, internal, size):
        obj: rdflib.term.Node
        if o.startswith("<"):
            obj = rdflib.URIRef(o[1:-1])
        else:
            obj = rdflib.Literal(_UNESCAPE.sub(r"\1", o[1:-1]))
        g.add((s, rdflib.URIRef(p[1:-1]), obj))
    return g


def random_bytes(rng: random.Random, size: int) -> bytes:
    """``size`` random bytes (the content of a benchmark binary)."""
    return rng.randbytes(size)
