"""The input checker: server-managed triples, single subject, term shapes, refint."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import (
    InvalidResourceError,
    InvalidTripleError,
    RefIntViolationError,
    ServerManagedTermError,
    SingleSubjectError,
)
from lakesuperior.model.context import Context, Settings
from lakesuperior.model.namespaces import FCREPO, LDP, RDF_TYPE, Namespace
from lakesuperior.model.validation import InputChecker

BASE = "http://test.example/rest"
EX = Namespace("http://ex.org/")


def _check(repo, uid, triples, handling="strict", **settings):
    s = Settings(base_uri=BASE, **settings)
    with repo.store.read() as txn:
        return InputChecker(Context(txn, s), uid, handling).check(triples)


PUB = f"<{BASE}/a>"


def test_checker_internalizes(repo):
    out = _check(repo, "/a", [
        (PUB, EX.p, '"x"'),
        (f"<{BASE}/a#h>", EX.p, f"<{BASE}/>"),
        ("_:b", EX.p, PUB),
    ])
    assert out == [("<info:fcres/a>", EX.p, '"x"'),
                   ("<info:fcres/a#h>", EX.p, "<info:fcres/>"),
                   ("_:b", EX.p, "<info:fcres/a>")]


def test_checker_server_managed(repo):
    triples = [(PUB, EX.p, '"x"'), (PUB, RDF_TYPE, LDP.DirectContainer),
               (PUB, FCREPO.created, '"2000"')]
    with pytest.raises(ServerManagedTermError) as e:
        _check(repo, "/a", triples)
    assert "DirectContainer" in str(e.value)
    assert _check(repo, "/a", triples, "lenient") == [("<info:fcres/a>", EX.p, '"x"')]


def test_checker_single_subject(repo):
    with pytest.raises(SingleSubjectError) as e:
        _check(repo, "/a", [(f"<{BASE}/b>", EX.p, '"x"')])
    assert f"{BASE}/b" in str(e.value)
    with pytest.raises(SingleSubjectError):
        _check(repo, "/a", [("<http://elsewhere.org/x>", EX.p, '"x"')])
    # a "hash URI" of another resource is not ours either
    with pytest.raises(SingleSubjectError):
        _check(repo, "/a", [(f"<{BASE}/ab#x>", EX.p, '"x"')])
    out = _check(repo, "/a", [("<http://elsewhere.org/x>", EX.p, '"x"')],
                 allow_foreign_subjects=True)
    assert out == [("<http://elsewhere.org/x>", EX.p, '"x"')]


def test_checker_invalid_terms(repo):
    with pytest.raises(InvalidTripleError):
        _check(repo, "/a", [('"lit"', EX.p, '"x"')])
    with pytest.raises(InvalidTripleError):
        _check(repo, "/a", [(PUB, "_:p", '"x"')])


@pytest.mark.parametrize("mode", ["off", "lenient", "strict"])
def test_checker_refint(repo, mode):
    triples = [(PUB, EX.p, f"<{BASE}/>"),          # exists (the root)
               (PUB, EX.p, f"<{BASE}/a#self>"),     # the resource itself
               (PUB, EX.p, f"<{BASE}/missing>"),    # not in the repository
               (PUB, EX.p, "<http://elsewhere.org/x>")]
    if mode == "strict":
        with pytest.raises(RefIntViolationError) as e:
            _check(repo, "/a", triples, referential_integrity=mode)
        assert f"{BASE}/missing" in str(e.value)
        return
    out = _check(repo, "/a", triples, referential_integrity=mode)
    objects = [t[2] for t in out]
    assert "<info:fcres/>" in objects and "<info:fcres/a#self>" in objects
    assert "<http://elsewhere.org/x>" in objects
    assert ("<info:fcres/missing>" in objects) is (mode == "off")


def test_checker_refuses_unknown_handling(repo):
    with pytest.raises(InvalidResourceError):
        _check(repo, "/a", [], "sloppy")


def _may_repeat(repo, triples):
    with repo.store.read() as txn:
        checker = InputChecker(Context(txn, Settings(base_uri=BASE)), "/a")
        out = checker.check(triples)
    return out, checker.may_repeat


@pytest.mark.parametrize("terms", [
    (f"<{BASE}/x>", "<info:fcres/x>"),      # an object named in both forms
    (f"<{BASE}>", f"<{BASE}/>"),            # the root with and without its slash
])
def test_checker_says_when_internalizing_may_merge_triples(repo, terms):
    out, may_repeat = _may_repeat(repo, [(PUB, EX.p, t) for t in terms])
    assert may_repeat and out[0] == out[1]
    out, may_repeat = _may_repeat(repo, [(PUB, EX.p, f"<{BASE}/x>"), (PUB, EX.q, '"x"'),
                                         (f"<{BASE}/a#h>", EX.p, f"<{BASE}/y>")])
    assert not may_repeat and len(set(out)) == 3


def test_checker_subject_in_internal_form_may_merge(repo):
    out, may_repeat = _may_repeat(repo, [(PUB, EX.p, '"x"'), ("<info:fcres/a>", EX.p, '"x"')])
    assert may_repeat and out[0] == out[1]
