"""Creating, reading and replacing RDF resources through the Python API."""
from __future__ import annotations

import io

import pytest
import rdflib
from rdflib import BNode, Literal, URIRef
from rdflib.compare import isomorphic

from lakesuperior import Config, Repository, __version__
from lakesuperior.exceptions import ResourceNotExistsError
from lakesuperior.model.namespaces import FCREPO, LDP, RDF_TYPE

BASE = "http://test.example/rest"
EX = "http://ex.org/"


def pub(uid):
    return f"<{BASE}{uid}>"


def user(res, p=None):
    return sorted(t for t in res.user_data if p is None or t[1] == p)


# --- the package and the repository ---------------------------------------------------

def test_package_exports():
    import lakesuperior
    assert lakesuperior.Repository is Repository
    assert isinstance(__version__, str) and __version__
    assert Config().data_dir


def test_new_repository_has_a_root(repo):
    root = repo.get("/")
    assert root.uid == "/"
    assert root.uri == BASE + "/"
    assert LDP.BasicContainer in root.ldp_types
    assert FCREPO.RepositoryRoot in root.types
    assert root.children == []
    assert root.is_container and not root.is_binary
    assert repo.exists("/") is True


def test_reopen_keeps_data(repo_factory):
    repo = repo_factory("r")
    repo.create_or_replace("/a", data=b'<> <http://ex.org/p> "x" .', media_type="text/turtle")
    created = repo.get("/").created
    repo.close()
    again = repo_factory("r")
    assert again.exists("/a")
    assert again.get("/").created == created           # not bootstrapped twice
    assert ("<http://test.example/rest/a>", f"<{EX}p>", '"x"') in again.get("/a").user_data


def test_repository_from_config(tmp_path):
    cfg = Config(data_dir=str(tmp_path / "d"), base_uri="http://cfg.example/base", sync=False)
    with Repository.from_config(cfg) as repo:
        assert repo.get("/").uri == "http://cfg.example/base/"
        assert (tmp_path / "d" / "ldprs").is_dir()
        assert (tmp_path / "d" / "ldpnr").is_dir()


def test_exists(repo):
    assert repo.exists("/nothing") is False
    repo.create_or_replace("/a")
    assert repo.exists("/a") and repo.exists("a") and repo.exists("/a/")


def test_get_missing(repo):
    with pytest.raises(ResourceNotExistsError):
        repo.get("/missing")


# --- create_or_replace ------------------------------------------------------------------------

TTL = b"""@prefix ex: <http://ex.org/> .
<> a ex:Thing ; ex:title "Hello"@en ; ex:count 3 ;
   ex:part <#part1> ; ex:see <http://elsewhere.org/x> .
<#part1> ex:label "first part" .
"""


def test_create_and_replace_from_turtle(repo):
    action, res = repo.create_or_replace("/a", data=TTL, media_type="text/turtle")
    assert action == "create"
    assert res.uid == "/a" and res.uri == BASE + "/a"
    assert LDP.BasicContainer in res.ldp_types          # the default model for RDF
    assert f"<{EX}Thing>" in res.types
    triples = set(res.triples)
    assert (pub("/a"), f"<{EX}title>", '"Hello"@en') in triples
    assert (pub("/a"), f"<{EX}count>", '"3"^^<http://www.w3.org/2001/XMLSchema#integer>') in triples
    assert (pub("/a"), f"<{EX}part>", pub("/a#part1")) in triples
    assert (pub("/a#part1"), f"<{EX}label>", '"first part"') in triples
    assert (pub("/a"), FCREPO.hasParent, pub("/")) in triples
    assert res.created and res.created == res.last_modified
    # get returns the same state
    got = repo.get("/a")
    assert sorted(got.triples) == sorted(res.triples)
    # PUT again replaces the user triples but keeps the creation date
    action, res2 = repo.create_or_replace(
        "/a", data=b'<> <http://ex.org/title> "Bye" .', media_type="text/turtle")
    assert action == "replace"
    assert user(res2) == [(pub("/a"), f"<{EX}title>", '"Bye"')]
    assert res2.created == res.created
    assert res2.last_modified >= res.last_modified
    assert res2.etag != res.etag
    assert user(repo.get("/a")) == user(res2)


def test_user_data_and_metadata_split(repo):
    _, res = repo.create_or_replace("/a", data=TTL, media_type="text/turtle")
    assert all(not t[1].startswith("<" + FCREPO.iri) for t in res.user_data)
    assert (pub("/a"), RDF_TYPE, f"<{EX}Thing>") in res.user_data
    assert (pub("/a"), RDF_TYPE, LDP.BasicContainer) in res.metadata
    assert (pub("/a"), RDF_TYPE, LDP.BasicContainer) not in res.user_data
    assert set(res.triples) == set(res.user_data) | set(res.metadata)


@pytest.mark.parametrize("media_type, body", [
    ("application/n-triples",
     b'<http://test.example/rest/a> <http://ex.org/p> "x" .\n'),
    ("application/ld+json",
     b'{"@id": "http://test.example/rest/a", "http://ex.org/p": "x"}'),
    ("application/rdf+xml",
     b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
     b'xmlns:ex="http://ex.org/"><rdf:Description rdf:about="http://test.example/rest/a">'
     b'<ex:p>x</ex:p></rdf:Description></rdf:RDF>'),
    ("text/turtle; charset=utf-8", b'<> <http://ex.org/p> "x" .'),
])
def test_formats(repo, media_type, body):
    _, res = repo.create_or_replace("/a", data=body, media_type=media_type)
    assert user(res) == [(pub("/a"), f"<{EX}p>", '"x"')]


def test_stream_input(repo):
    _, res = repo.create_or_replace("/a", stream=io.BytesIO(b'<> <http://ex.org/p> "s" .'),
                                    media_type="text/turtle")
    assert not res.is_binary
    assert user(res) == [(pub("/a"), f"<{EX}p>", '"s"')]


def test_empty_input_makes_an_empty_container(repo):
    _, res = repo.create_or_replace("/empty")
    assert res.user_data == []
    assert LDP.BasicContainer in res.ldp_types


def test_relative_uris_resolve_against_the_resource(repo_factory):
    repo = repo_factory(referential_integrity="off")   # the targets need not exist
    repo.create_or_replace("/c")
    _, res = repo.create_or_replace(
        "/c/r", media_type="text/turtle",
        data=b'<> <http://ex.org/a> <#frag> ; <http://ex.org/b> <sibling> ; '
             b'<http://ex.org/c> <r/sub> ; <http://ex.org/d> </abs> .')
    objects = {t[1]: t[2] for t in res.user_data}
    assert objects[f"<{EX}a>"] == pub("/c/r#frag")
    assert objects[f"<{EX}b>"] == pub("/c/sibling")        # RFC 3986 resolution
    assert objects[f"<{EX}c>"] == pub("/c/r/sub")
    assert objects[f"<{EX}d>"] == "<http://test.example/abs>"


def test_blank_nodes_round_trip(repo):
    ttl = (b'@prefix ex: <http://ex.org/> .\n'
           b'<> ex:author [ ex:name "Ann" ; ex:knows [ ex:name "Bob" ] ] ;\n'
           b'   ex:list ( "a" "b" ) .\n')
    _, res = repo.create_or_replace("/bn", data=ttl, media_type="text/turtle")
    expected = rdflib.Graph().parse(data=ttl.decode(), format="turtle", publicID=BASE + "/bn")
    assert isomorphic(rdflib.Graph() + _user_graph(repo.get("/bn")), expected)
    # and again after a replace with the output of a get
    body = repo.get("/bn", incl_srv_mgd=False).serialize("text/turtle")
    repo.create_or_replace("/bn", data=body, media_type="text/turtle")
    assert isomorphic(_user_graph(repo.get("/bn")), expected)


def test_blank_nodes_do_not_meet_across_resources(repo):
    body = b'<> <http://ex.org/p> _:b0 . _:b0 <http://ex.org/q> "x" .'
    _, a = repo.create_or_replace("/a", data=body, media_type="text/turtle")
    _, b = repo.create_or_replace("/b", data=body, media_type="text/turtle")
    bnodes_a = {t[2] for t in a.user_data if t[2].startswith("_:")}
    bnodes_b = {t[2] for t in b.user_data if t[2].startswith("_:")}
    assert bnodes_a and bnodes_b and not bnodes_a & bnodes_b


def _user_graph(res):
    from lakesuperior.rdfio import triples_to_graph
    return triples_to_graph(res.user_data)


def test_create_from_rdflib_graph(repo):
    g = rdflib.Graph()
    me = URIRef(BASE + "/g")
    b = BNode()
    g.add((me, URIRef(EX + "title"), Literal("T", lang="en")))
    g.add((me, URIRef(EX + "author"), b))
    g.add((b, URIRef(EX + "name"), Literal("Ann")))
    g.add((URIRef(""), URIRef(EX + "rel"), URIRef("#x")))   # relative: resolved
    _, res = repo.create_or_replace("/g", graph=g)
    expected = rdflib.Graph()
    for t in g:
        expected.add(tuple(URIRef(BASE + "/g" + str(x)) if isinstance(x, URIRef)
                           and not str(x).startswith("http") else x for x in t))
    assert isomorphic(_user_graph(res), expected)
    assert (pub("/g"), f"<{EX}rel>", pub("/g#x")) in res.user_data


def test_intermediate_containers_are_created(repo):
    action, res = repo.create_or_replace("/x/y/z")
    assert action == "create"
    assert repo.get("/").children == ["/x"]
    x = repo.get("/x")
    assert LDP.BasicContainer in x.ldp_types and x.children == ["/x/y"]
    assert repo.get("/x/y").children == ["/x/y/z"]


def test_containment_and_parent(repo):
    repo.create_or_replace("/p")
    for name in ("a", "b", "c"):
        repo.create_or_replace(f"/p/{name}")
    p = repo.get("/p")
    assert sorted(p.children) == ["/p/a", "/p/b", "/p/c"]
    assert (pub("/p"), LDP.contains, pub("/p/b")) in p.triples
    assert (pub("/p/b"), FCREPO.hasParent, pub("/p")) in repo.get("/p/b").triples
    # the parent's lastModified moves with its children
    before = p.last_modified
    repo.create_or_replace("/p/d")
    assert repo.get("/p").last_modified > before


def test_replace_container_keeps_children(repo):
    repo.create_or_replace("/p")
    repo.create_or_replace("/p/a")
    repo.create_or_replace("/p", data=b'<> <http://ex.org/t> "new" .', media_type="text/turtle")
    p = repo.get("/p")
    assert p.children == ["/p/a"]
    assert user(p) == [(pub("/p"), f"<{EX}t>", '"new"')]
    # and the next child is still added next to the existing one
    repo.create_or_replace("/p/b")
    assert sorted(repo.get("/p").children) == ["/p/a", "/p/b"]


# --- create (POST) --------------------------------------------------------------------------------

def test_create_mints_uuid(repo):
    res = repo.create("/", data=b'<> <http://ex.org/p> "x" .', media_type="text/turtle")
    seg = res.uid[1:]
    assert len(seg) == 36 and seg.count("-") == 4
    assert repo.get("/").children == [res.uid]
    assert user(res) == [(pub(res.uid), f"<{EX}p>", '"x"')]


def test_create_with_slug(repo):
    res = repo.create("/", slug="named", data=b'<> <http://ex.org/p> <#me> .',
                      media_type="text/turtle")
    assert res.uid == "/named"
    # slug taken: a uuid is minted, and relative URIs follow the new uid
    res2 = repo.create("/", slug="named", data=b'<> <http://ex.org/p> <#me> .',
                       media_type="text/turtle")
    assert res2.uid != "/named" and res2.uid.startswith("/")
    assert user(res2) == [(pub(res2.uid), f"<{EX}p>", pub(res2.uid + "#me"))]
    assert repo.get("/named").user_data == [(pub("/named"), f"<{EX}p>", pub("/named#me"))]


def test_create_under_missing_parent(repo, state):
    before = state(repo)
    with pytest.raises(ResourceNotExistsError):
        repo.create("/nope")
    assert state(repo) == before


# --- get options --------------------------------------------------------------------------------

def test_get_options(repo):
    repo.create_or_replace("/p", data=b'<> <http://ex.org/t> "p" .', media_type="text/turtle")
    repo.create_or_replace("/p/a", data=b'<> <http://ex.org/t> "a" .', media_type="text/turtle")
    repo.create_or_replace("/other", data=b'<> <http://ex.org/link> </rest/p> .',
                           media_type="text/turtle")
    full = set(repo.get("/p").triples)
    assert (pub("/p"), LDP.contains, pub("/p/a")) in full
    no_children = set(repo.get("/p", incl_children=False).triples)
    assert (pub("/p"), LDP.contains, pub("/p/a")) not in no_children
    assert repo.get("/p", incl_children=False).children == ["/p/a"]
    no_sm = repo.get("/p", incl_srv_mgd=False).triples
    assert not any(t[1] == FCREPO.created or t[2].startswith("<" + LDP.iri) for t in no_sm)
    assert (pub("/p"), f"<{EX}t>", '"p"') in no_sm
    inbound = set(repo.get("/p", incl_inbound=True).triples)
    assert (pub("/other"), f"<{EX}link>", pub("/p")) in inbound
    assert (pub("/other"), f"<{EX}link>", pub("/p")) not in full
    embedded = set(repo.get("/p", embed_children=True).triples)
    assert (pub("/p/a"), f"<{EX}t>", '"a"') in embedded
    assert (pub("/p/a"), f"<{EX}t>", '"a"') not in full


def test_get_with_other_base_uri(repo):
    repo.create_or_replace("/a", data=b'<> <http://ex.org/p> <#x> .', media_type="text/turtle")
    res = repo.get("/a", base_uri="https://public.example/fcrepo/")
    assert res.uri == "https://public.example/fcrepo/a"
    assert ("<https://public.example/fcrepo/a>", f"<{EX}p>",
            "<https://public.example/fcrepo/a#x>") in res.triples
    # input under that base maps to the same resources
    repo.create_or_replace("/b", data=b'<> <http://ex.org/p> <a> .', media_type="text/turtle",
                           base_uri="https://public.example/fcrepo")
    assert (pub("/b"), f"<{EX}p>", pub("/a")) in repo.get("/b").triples


def test_imr_is_an_rdflib_graph(repo):
    _, res = repo.create_or_replace("/a", data=TTL, media_type="text/turtle")
    got = repo.get("/a")
    assert "imr" not in got.__dict__          # nothing built before it is asked for
    imr = got.imr
    assert isinstance(imr, rdflib.Graph)
    assert len(imr) == len(got.triples)
    assert (URIRef(BASE + "/a"), URIRef(EX + "title"), Literal("Hello", lang="en")) in imr


def test_serialize(repo):
    repo.create_or_replace("/a", data=TTL, media_type="text/turtle")
    out = repo.get("/a").serialize("text/turtle")
    g = rdflib.Graph().parse(data=out.decode(), format="turtle")
    assert (URIRef(BASE + "/a"), URIRef(EX + "title"), Literal("Hello", lang="en")) in g
    nt = repo.get("/a").serialize("application/n-triples")
    assert len(nt.splitlines()) == len(repo.get("/a").triples)


def test_turtle_and_graph_inputs_store_the_same_graph(repo):
    ttl = (b'@prefix ex: <http://ex.org/> .\n'
           b'<> ex:t "caf\xc3\xa9"@fr, "2"^^<http://www.w3.org/2001/XMLSchema#long> ;\n'
           b'   ex:b [ ex:c "nested \\"quoted\\" \\n text" ] ; ex:r <#h> .\n'
           b'<#h> ex:x <http://example.edu/res/0> .\n')
    _, from_bytes = repo.create_or_replace("/one", data=ttl, media_type="text/turtle")
    g = rdflib.Graph().parse(data=ttl.decode(), format="turtle", publicID=BASE + "/two")
    _, from_graph = repo.create_or_replace("/two", graph=g)

    def normalized(res, uid):
        return _user_graph(res).serialize(format="nt").replace(BASE + uid, "http://self.example/")

    a = rdflib.Graph().parse(data=normalized(repo.get("/one"), "/one"), format="nt")
    b = rdflib.Graph().parse(data=normalized(repo.get("/two"), "/two"), format="nt")
    assert len(a) == 6 and isomorphic(a, b)


def test_hash_subjects_and_foreign_subjects(repo_factory):
    from lakesuperior.exceptions import SingleSubjectError
    strict = repo_factory("strict")
    body = b'<#a> <http://ex.org/p> "hash ok" . <http://other.org/x> <http://ex.org/p> "foreign" .'
    with pytest.raises(SingleSubjectError):
        strict.create_or_replace("/r", data=body, media_type="text/turtle")
    assert strict.exists("/r") is False
    _, res = strict.create_or_replace("/r", data=body.split(b" . ")[0] + b" .",
                                      media_type="text/turtle")
    assert (pub("/r#a"), f"<{EX}p>", '"hash ok"') in res.user_data
    open_repo = repo_factory("open", allow_foreign_subjects=True)
    _, res = open_repo.create_or_replace("/r", data=body, media_type="text/turtle")
    assert ("<http://other.org/x>", f"<{EX}p>", '"foreign"') in res.user_data


def test_duplicate_input_triples_are_stored_once(repo):
    line = b'<http://test.example/rest/d> <http://ex.org/p> "same" .\n'
    _, res = repo.create_or_replace("/d", data=line * 3, media_type="application/n-triples")
    assert res.user_data == [(pub("/d"), f"<{EX}p>", '"same"')]
    assert repo.get("/d").user_data == res.user_data
