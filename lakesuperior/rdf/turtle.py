"""Turtle written straight from canonical N-Triples terms.

A canonical N-Triples term (what the store and ``rdfio.parse`` give) is valid
Turtle as it is: IRIs, blank node labels and literals have the same grammar and
escapes in both. So Turtle is the terms joined: a subject's next predicate after
``;``, a predicate's next object after ``,`` (for triples that come one after the
other, as pyoxigraph's writer groups them), ``a`` for ``rdf:type``, and an IRI
(or a literal's datatype) written ``prefix:local`` where a prefix names its
namespace (up to its last ``#`` or ``/``) and the local name is plain. Anything
else is written in full, which is always valid. No parse in between: several
times faster than handing the terms to a parser and its writer.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["write", "object_list", "Shortener"]

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"

# A local name written as prefix:name: a plain subset of PN_LOCAL.
_PLAIN_LOCAL = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


class Shortener:
    """IRIs and typed literals written with the prefixes of one document (each
    distinct term worked out once)."""

    def __init__(self, prefixes: Mapping[str, str]):
        self.namespaces: dict[str, str] = {}
        for prefix, ns in prefixes.items():
            self.namespaces.setdefault(ns, prefix)
        self._starts = tuple("<" + ns for ns in self.namespaces)
        self._done: dict[str, str] = {}

    def iri(self, term: str) -> str:
        """An IRI term (``<...>``) as ``prefix:local`` where it can be, else as given."""
        if not term.startswith(self._starts):
            return term
        done = self._done.get(term)
        if done is None:
            done = self._done[term] = self._shortened(term)
        return done

    def _shortened(self, term: str) -> str:
        cut = max(term.rfind("#"), term.rfind("/")) + 1
        if cut:
            prefix = self.namespaces.get(term[1:cut])
            if prefix is not None and _PLAIN_LOCAL.fullmatch(term, cut, len(term) - 1):
                return f"{prefix}:{term[cut:-1]}"
        return term

    def predicate(self, term: str) -> str:
        """A predicate: ``a`` for ``rdf:type``, else as ``iri``."""
        return "a" if term == RDF_TYPE else self.iri(term)

    def term(self, term: str) -> str:
        """A subject or an object: IRIs and typed literals' datatypes shortened."""
        if term[0] == "<":
            return self.iri(term)
        if term[0] == '"' and term[-1] == ">":
            # A typed literal: an IRI holds no "^", so the last "^^<" starts the datatype.
            cut = term.rfind("^^<") + 2
            return term[:cut] + self.iri(term[cut:])
        return term


def write(triples: Iterable[tuple[str, str, str]], prefixes: Mapping[str, str],
          lists: Sequence[tuple[str, str, Sequence[str]]] = ()) -> str:
    """A Turtle document of ``triples`` (canonical N-Triples terms), then each
    ``(subject, predicate, objects)`` of ``lists`` as one statement; the
    ``@prefix`` lines of ``prefixes`` first (their names are the caller's to check)."""
    short = Shortener(prefixes)
    pred, term = short.predicate, short.term
    out = [f"@prefix {prefix}: <{ns}> .\n" for prefix, ns in prefixes.items()]
    append = out.append
    last_s = last_p = None
    for s, p, o in triples:
        if s != last_s:
            if last_s is not None:
                append(" .\n")
            append(f"{term(s)} {pred(p)} {term(o)}")
            last_s, last_p = s, p
        elif p != last_p:
            append(f" ;\n\t{pred(p)} {term(o)}")
            last_p = p
        else:
            append(" , " + term(o))
    if last_s is not None:
        append(" .\n")
    out.extend(object_list(s, p, objects, short) for s, p, objects in lists)
    return "".join(out)


def object_list(subject: str, predicate: str, objects: Sequence[str],
                short: Shortener) -> str:
    """One statement ``s p o1 , o2 , ... .`` of terms trusted to be canonical
    (a store's output: the objects are written as given); empty for no objects."""
    if not objects:
        return ""
    head = f"{short.term(subject)} {short.predicate(predicate)} "
    return head + " ,\n\t\t".join(objects) + " .\n"
