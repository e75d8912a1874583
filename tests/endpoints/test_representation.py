"""The pure representation logic: ETags, allowed methods, types, Link headers,
Prefer options and header sets, on plain values (no app, no repository)."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from lakesuperior.endpoints import representation as rep
from lakesuperior.endpoints.paths import Target, Urls
from lakesuperior.http import headers as hdr

LDP = "http://www.w3.org/ns/ldp#"
MEMENTO = "http://mementoweb.org/ns#"
URLS = Urls("http://h", "/rest")
V1 = SimpleNamespace(id="20240101000000", label=None)
V2 = SimpleNamespace(id="20240102000000", label="two")


def resource(**kw):
    """A stand-in for a resource or its ``Repository.info``."""
    values = dict(uid="/a", is_binary=False, interaction_model=f"<{LDP}BasicContainer>",
                  ldp_types=frozenset({f"<{LDP}Resource>", f"<{LDP}RDFSource>",
                                       f"<{LDP}Container>", f"<{LDP}BasicContainer>"}),
                  etag='W/"abc"', last_modified="2024-01-02T03:04:05.123456Z",
                  version_info=[], version_ids=[],
                  triples=[("<http://h/rest/a>", "<http://p>", '"o"')],
                  digest="d1", mimetype="text/plain", types=[])
    values.update(kw)
    return SimpleNamespace(**values)


def binary(**kw):
    kw.setdefault("ldp_types", frozenset({f"<{LDP}Resource>", f"<{LDP}NonRDFSource>"}))
    return resource(is_binary=True, interaction_model=f"<{LDP}NonRDFSource>", **kw)


def link_set(value: str) -> set[tuple[str, frozenset[str]]]:
    return {(lk.uri, frozenset(lk.rel)) for lk in hdr.parse_link([value])}


@pytest.mark.parametrize("module", ["representation", "preconditions", "paths", "memento"])
def test_no_flask_import(module):
    code = (f"import sys, lakesuperior.endpoints.{module}; "
            "assert not {'flask', 'werkzeug'} & set(sys.modules), 'flask imported'")
    # -P: the installed (compiled) package, not the source tree in the working directory
    subprocess.run([sys.executable, "-P", "-c", code], check=True)


def test_iri_and_vocabulary_come_from_the_model():
    assert rep.iri("<http://x/y#z>") == "http://x/y#z"
    assert rep.PREFER_CONTAINMENT == LDP + "PreferContainment"
    assert rep.CONSTRAINED_BY == LDP + "constrainedBy"
    assert "http://fedora.info/definitions/fcrepo#ServerManaged" in rep.PREFER_SERVER_MANAGED
    assert "http://fedora.info/definitions/v4/repository#InboundReferences" in rep.PREFER_INBOUND


# --- Prefer -------------------------------------------------------------------------------

def test_read_options_default():
    options, applied = rep.read_options(hdr.Prefer())
    assert options == dict(rep.DEFAULT_OPTIONS) and not applied
    assert not rep.needs_triples(options)


def test_read_options_minimal_and_includes():
    options, applied = rep.read_options(hdr.Prefer(return_="minimal"))
    assert applied and not options["incl_children"] and not options["incl_membership"]
    options, _ = rep.read_options(hdr.Prefer(
        return_="representation", include=frozenset({LDP + "PreferMinimalContainer",
                                                     LDP + "PreferMembership"})))
    assert not options["incl_children"] and options["incl_membership"]
    options, _ = rep.read_options(hdr.Prefer(omit=frozenset({LDP + "PreferContainment"})))
    assert not options["incl_children"] and options["incl_membership"]


def test_read_options_fedora_and_oa():
    inbound = "http://fedora.info/definitions/fcrepo#PreferInboundReferences"
    contained = "http://www.w3.org/ns/oa#PreferContainedDescriptions"
    options, _ = rep.read_options(hdr.Prefer(include=frozenset({inbound, contained})))
    assert options["incl_inbound"] and options["embed_children"]
    assert rep.needs_triples(options)
    options, _ = rep.read_options(hdr.Prefer(include=frozenset({inbound}),
                                             omit=frozenset({inbound})))
    assert options["incl_inbound"]   # include wins, as in Fedora 6 (LdpPreferTag)
    for sm in rep.PREFER_SERVER_MANAGED:
        options, _ = rep.read_options(hdr.Prefer(omit=frozenset({sm})))
        assert not options["incl_srv_mgd"]


# --- validators -----------------------------------------------------------------------------

def test_binary_etag_is_strong_and_follows_content():
    res, target = binary(), Target("/a")
    tag = rep.etag_of(res, target)
    assert not rep.is_weak(tag) and tag.startswith('"')
    assert rep.etag_of(binary(digest="d2"), target) != tag
    assert rep.etag_of(binary(mimetype="image/png"), target) != tag
    assert rep.etag_of(binary(etag='W/"other"'), target) == tag
    assert rep.is_weak(rep.etag_of(res, Target("/a", "metadata")))
    assert not rep.is_weak(rep.etag_of(res, Target("/a", "memento", "20240101000000")))


def test_rdf_etag_is_weak_and_follows_options_and_versions():
    res, target = resource(), Target("/a")
    tag = rep.etag_of(res, target)
    assert rep.is_weak(tag)
    assert rep.etag_of(res, target, rep.DEFAULT_OPTIONS) == tag
    minimal, _ = rep.read_options(hdr.Prefer(return_="minimal"))
    assert rep.etag_of(res, target, minimal) != tag
    assert rep.etag_of(resource(version_info=[V1], version_ids=[V1.id]), target) != tag
    assert rep.etag_of(resource(etag='W/"changed"'), target) != tag
    # with inbound references the triples themselves count
    inbound = {**rep.DEFAULT_OPTIONS, "incl_inbound": True}
    assert (rep.etag_of(res, target, inbound)
            != rep.etag_of(resource(triples=[]), target, inbound))
    assert rep.etag_of(res, target) == rep.etag_of(resource(triples=[]), target)


def test_modified_of():
    assert rep.modified_of(resource()).isoformat() == "2024-01-02T03:04:05.123456+00:00"
    assert rep.modified_of(resource(last_modified=None)) is None
    assert rep.modified_of(resource(last_modified="yesterday")) is None


def test_timemap_etag():
    tag = rep.timemap_etag("http://h/rest/a/fcr:versions", [V1.id])
    assert rep.is_weak(tag)
    assert tag == rep.timemap_etag("http://h/rest/a/fcr:versions", [V1.id])
    assert tag != rep.timemap_etag("http://h/rest/a/fcr:versions", [V1.id, V2.id])


# --- methods and types ----------------------------------------------------------------------

@pytest.mark.parametrize("res, target, allowed", [
    (resource(), Target("/a"), ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]),
    (resource(), Target("/"), ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"]),
    (resource(interaction_model=f"<{LDP}RDFSource>"), Target("/a"),
     ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"]),
    (binary(), Target("/a"), ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]),
    (None, Target("/a", "metadata"), ["GET", "HEAD", "OPTIONS", "PUT", "PATCH"]),
    (None, Target("/a", "timemap"), ["GET", "HEAD", "OPTIONS", "POST"]),
    (None, Target("/a", "memento", V1.id), ["GET", "HEAD", "OPTIONS", "DELETE"]),
    (None, Target("/a", "tombstone"), ["OPTIONS", "POST", "DELETE"]),
])
def test_allowed_methods(res, target, allowed):
    assert rep.allowed_methods(res, target) == allowed


def test_advertised_types():
    types = rep.advertised_types(resource(), Target("/a"))
    assert types[0] == f"<{LDP}Resource>" and len(types) == 4
    assert rep.advertised_types(binary(), Target("/a", "metadata")) == [
        f"<{LDP}Resource>", f"<{LDP}RDFSource>"]
    assert rep.advertised_types(resource(), Target("/a", "memento", V1.id)) == [
        f"<{LDP}Resource>", f"<{LDP}RDFSource>"]
    assert rep.advertised_types(resource(ldp_types=frozenset()), Target("/a")) == [
        f"<{LDP}Resource>"]
    assert rep.type_links([f"<{LDP}Resource>"]) == [f'<{LDP}Resource>; rel="type"']


# --- links and header sets --------------------------------------------------------------------

def test_resource_links_of_a_binary():
    links = link_set(", ".join(rep.resource_links(URLS, binary(), Target("/a"))))
    assert (f"{MEMENTO}OriginalResource", frozenset({"type"})) in links
    assert ("http://h/rest/a", frozenset({"original", "timegate"})) in links
    assert ("http://h/rest/a/fcr:versions", frozenset({"timemap"})) in links
    assert ("http://h/rest/a/fcr:metadata", frozenset({"describedby"})) in links
    assert ("http://h/constraints", frozenset({(LDP + "constrainedBy").lower()})) in links


def test_resource_links_of_a_description_and_mementos():
    links = link_set(", ".join(rep.resource_links(URLS, binary(), Target("/a", "metadata"))))
    assert ("http://h/rest/a", frozenset({"describes"})) in links
    assert ("http://h/rest/a/fcr:metadata", frozenset({"original", "timegate"})) in links
    assert ("http://h/rest/a/fcr:metadata/fcr:versions", frozenset({"timemap"})) in links
    memento = Target("/a", "memento", V1.id)
    links = link_set(", ".join(rep.resource_links(URLS, binary(), memento)))
    assert (f"{MEMENTO}Memento", frozenset({"type"})) in links
    assert (f"http://h/rest/a/fcr:metadata/fcr:versions/{V1.id}",
            frozenset({"describedby"})) in links
    assert (f"{MEMENTO}TimeGate", frozenset({"type"})) not in links


def test_resource_headers():
    headers = rep.resource_headers(URLS, resource(), Target("/a"))
    assert headers["ETag"] == rep.etag_of(resource(), Target("/a"))
    assert headers["X-State-Token"] == rep.state_token(resource())
    assert headers["Last-Modified"] == "Tue, 02 Jan 2024 03:04:05 GMT"
    assert headers["Accept-Post"] == rep.ACCEPT_POST
    assert headers["Accept-Patch"] == rep.SPARQL_UPDATE
    assert headers["Vary"] == "Accept, Prefer, Accept-Datetime"
    assert "Memento-Datetime" not in headers
    headers = rep.resource_headers(URLS, binary(last_modified=None), Target("/a"))
    assert "Accept-Post" not in headers and "Accept-Patch" not in headers
    assert "Last-Modified" not in headers
    headers = rep.resource_headers(URLS, resource(), Target("/a", "memento", V1.id))
    assert headers["Memento-Datetime"] == "Mon, 01 Jan 2024 00:00:00 GMT"
    assert headers["Vary"] == "Accept, Prefer"
    assert rep.not_modified_headers({**headers, "Allow": "GET"}).keys() == {
        "ETag", "Last-Modified", "Vary", "Link", "Memento-Datetime"}


def test_write_headers():
    child = resource(uid="/a/b")
    headers = rep.write_headers(URLS, child, handling="lenient")
    assert headers["Preference-Applied"] == "handling=lenient"
    assert "ETag" not in headers
    target = Target("/a/b")
    assert link_set(headers["Link"]) == link_set(
        ", ".join(rep.resource_links(URLS, child, target)))
    assert "anchor" not in headers["Link"]
    headers = rep.write_headers(URLS, binary())
    assert "Preference-Applied" not in headers
    assert ("http://h/rest/a/fcr:metadata", frozenset({"describedby"})) in link_set(
        headers["Link"])
    assert "anchor" not in headers["Link"]
    created = hdr.parse_link([rep.write_headers(URLS, binary(), created=True)["Link"]])
    assert [lk.params.get("anchor") for lk in created if "anchor" in lk.params] == [
        "http://h/rest/a"]
    assert [lk for lk in created if "anchor" in lk.params][0].has_rel("describedby")
    described = rep.write_headers(URLS, binary(), Target("/a", "metadata"))
    assert "describedby" not in described["Link"]
    assert ("http://h/rest/a", frozenset({"describes"})) in link_set(described["Link"])


def test_timemap_and_timegate_headers():
    target = Target("/a", "timemap", description=True)
    headers = rep.timemap_headers(URLS, target, [V1.id, V2.id], "text/turtle")
    assert headers["Content-Type"] == "text/turtle; charset=utf-8"
    assert headers["Last-Modified"] == "Tue, 02 Jan 2024 00:00:00 GMT"
    assert headers["ETag"] == rep.timemap_etag(
        "http://h/rest/a/fcr:metadata/fcr:versions", [V1.id, V2.id])
    assert ("http://h/rest/a/fcr:metadata", frozenset({"original", "timegate"})) in link_set(
        headers["Link"])
    assert "Last-Modified" not in rep.timemap_headers(URLS, target, [], "text/turtle")
    headers = rep.timegate_headers(URLS, Target("/a"), V2.id)
    assert headers["Location"] == f"http://h/rest/a/fcr:versions/{V2.id}"
    assert headers["Vary"] == "Accept-Datetime"
    headers = rep.timegate_headers(URLS, Target("/a", "metadata"), V2.id)
    assert headers["Location"] == f"http://h/rest/a/fcr:metadata/fcr:versions/{V2.id}"


def test_content_type_of():
    assert rep.content_type_of("text/turtle") == "text/turtle; charset=utf-8"
    assert rep.content_type_of("application/ld+json") == "application/ld+json"
