"""External content through the Python API (Fedora API 1.0 section 3.9): the three
handlings over http and file, the allow-list, and failures that store nothing."""
from __future__ import annotations

import hashlib
import os
import socket

import pytest

from lakesuperior.exceptions import (
    ChecksumValidationError,
    ConfigError,
    ExternalContentError,
    PayloadTooLargeError,
)
from lakesuperior.store.external import AllowList, normalize_url

from .conftest import CONTENT, TEXT

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]


def _tmp_files(repo) -> list[str]:
    return [name for name, _size, _mtime in repo.binaries.leftovers()]


# --- copy ----------------------------------------------------------------------------------

def test_fedora_3_9_copy_over_http(ext_repo, origin):
    action, res = ext_repo.create_or_replace("/c", external=origin.url + "/files/data.bin",
                                             external_handling="copy")
    assert action == "create"
    assert res.size == len(CONTENT)
    assert res.mimetype == "application/x-test"          # the source's Content-Type
    assert res.digest == hashlib.sha512(CONTENT).hexdigest()
    assert res.external_url is None                       # a copy is an ordinary binary
    with res.content as fh:
        assert fh.read() == CONTENT


def test_fedora_3_9_copy_over_file_with_type(ext_repo, files):
    res = ext_repo.create("/", slug="f", external=files.url("hello.txt"),
                          external_handling="copy", media_type="text/x-mine")
    assert res.mimetype == "text/x-mine"                  # the Link's type wins
    with res.content as fh:
        assert fh.read() == TEXT
    assert ext_repo.fixity_check(res.uid).ok


def test_fedora_3_9_copy_digest_verified(ext_repo, origin, state):
    before = state(ext_repo)
    with pytest.raises(ChecksumValidationError):
        ext_repo.create_or_replace("/c", external=origin.url + "/files/data.bin",
                                   external_handling="copy", digests={"sha256": "0" * 64})
    assert state(ext_repo) == before
    good = {"sha256": hashlib.sha256(CONTENT).hexdigest()}
    _, res = ext_repo.create_or_replace("/c", external=origin.url + "/files/data.bin",
                                        external_handling="copy", digests=good)
    assert res.digests["sha256"] == good["sha256"]


def test_fedora_3_9_copy_failing_midway_stores_nothing(ext_repo, origin, state):
    before = state(ext_repo)
    with pytest.raises(ExternalContentError, match="ended after 10 of its 1000 bytes"):
        ext_repo.create_or_replace("/c", external=origin.url + "/midway",
                                   external_handling="copy")
    assert state(ext_repo) == before
    assert _tmp_files(ext_repo) == []                      # the partial file is gone


@pytest.mark.parametrize("handling", ["copy", "proxy"])
def test_slow_source_times_out(repo_factory, origin, files, state, handling):
    from .conftest import allow_list
    repo = repo_factory(external_content_allowed=allow_list(origin, files),
                        external_content_timeout=0.2)
    before = state(repo)
    with pytest.raises(ExternalContentError, match="timed out"):
        repo.create_or_replace("/x", external=origin.url + "/slow", external_handling=handling)
    assert state(repo) == before


@pytest.mark.parametrize("handling", ["redirect", "proxy"])
def test_digest_of_redirect_and_proxy_verified(ext_repo, origin, state, handling):
    url = origin.url + "/files/hello.txt"
    before = state(ext_repo)
    with pytest.raises(ChecksumValidationError, match="sha256 digest mismatch"):
        ext_repo.create_or_replace("/x", external=url, external_handling=handling,
                                   digests={"sha256": "0" * 64})
    assert state(ext_repo) == before
    _, res = ext_repo.create_or_replace("/x", external=url, external_handling=handling,
                                        digests={"md5": hashlib.md5(TEXT).hexdigest()})
    assert res.external_url == url
    assert list(ext_repo.binaries) == []                   # still nothing stored


def test_copy_too_large(ext_repo, origin, state):
    origin.files["big.bin"] = (b"x" * 60_000, "application/octet-stream")
    before = state(ext_repo)
    with pytest.raises(PayloadTooLargeError):
        ext_repo.create_or_replace("/c", external=origin.url + "/files/big.bin",
                                   external_handling="copy")
    assert state(ext_repo) == before
    assert _tmp_files(ext_repo) == []


# --- redirect and proxy --------------------------------------------------------------------

@pytest.mark.parametrize("handling", ["redirect", "proxy"])
def test_fedora_3_9_redirect_and_proxy_record_the_url(ext_repo, origin, files, handling):
    for uid, url in (("/h", origin.url + "/files/hello.txt"), ("/f", files.url("hello.txt"))):
        _, res = ext_repo.create_or_replace(uid, external=url, external_handling=handling)
        assert (res.external_url, res.external_handling) == (url, handling)
        assert res.mimetype == "text/plain"
        assert res.size == len(TEXT)
        assert res.digest is None                          # nothing stored
        info = ext_repo.info(uid)
        assert (info.external_url, info.external_handling) == (url, handling)
    assert list(ext_repo.binaries) == []


def test_external_kept_by_description_edits_and_versions(ext_repo, origin):
    url = origin.url + "/files/hello.txt"
    ext_repo.create_or_replace("/p", external=url, external_handling="proxy")
    res = ext_repo.get("/p")
    # a GET-modify-PUT round trip of the description keeps the URL and handling
    ext_repo.update_delta("/p", [(None, None, None)],
                          list(res.triples) + [(res.uri and f"<{res.uri}>",
                                                "<http://purl.org/dc/terms/title>", '"t"')],
                          handling="tolerant")
    after = ext_repo.get("/p")
    assert (after.external_url, after.external_handling) == (url, "proxy")
    assert ("<http://purl.org/dc/terms/title>", '"t"') in [(p, o) for _, p, o in after.triples]
    versions = ext_repo.versions("/p")
    assert len(versions) >= 1
    old = ext_repo.get_version("/p", versions[0].id)
    assert (old.external_url, old.external_handling) == (url, "proxy")


def test_external_change_is_an_event(ext_repo, origin):
    ext_repo.create_or_replace("/p", external=origin.url + "/files/hello.txt",
                               external_handling="redirect")
    kinds = [(e.uid, e.kind) for e in ext_repo.changes()]
    assert ("/p", "create") in kinds


def test_replacing_external_with_stored_content(ext_repo, origin):
    ext_repo.create_or_replace("/p", external=origin.url + "/files/hello.txt",
                               external_handling="proxy")
    _, res = ext_repo.create_or_replace("/p", data=b"mine", media_type="text/plain")
    assert res.external_url is None and res.external_handling is None
    with res.content as fh:
        assert fh.read() == b"mine"


# --- refusals ------------------------------------------------------------------------------

def test_empty_allow_list_refuses_and_says_how(repo, origin, state):
    before = state(repo)
    with pytest.raises(ExternalContentError, match="external_content.allowed"):
        repo.create_or_replace("/x", external=origin.url + "/files/hello.txt",
                               external_handling="copy")
    assert state(repo) == before
    assert origin.requests == []                            # nothing was fetched


@pytest.mark.parametrize("make_url, message", [
    (lambda o, f: o.url + "/filesystem", "not under an allowed"),           # prefix boundary
    (lambda o, f: o.url + "/files/../status/500", r"\. or \.\."),
    (lambda o, f: o.url + "/files/%2e%2e/status/500", r"\. or \.\."),
    # a backslash is a path separator to WHATWG parsers (browsers following a
    # redirect binary, many origin servers): \..\ climbs out of the prefix
    (lambda o, f: o.url + "/files/\\..\\status/500", "backslash"),
    (lambda o, f: o.url + "/files/%5C..%5Cstatus/500", r"\. or \.\."),
    (lambda o, f: o.url + "/files/..%5cstatus/500", r"\. or \.\."),
    # ..;/ is .. to a Java servlet container, which drops a segment's ;parameters;
    # %252e%252e is .. to a server that decodes what its proxy decoded already
    (lambda o, f: o.url + "/files/..;/status/500", r"\. or \.\."),
    (lambda o, f: o.url + "/files/..;x=1/status/500", r"\. or \.\."),
    (lambda o, f: o.url + "/files/.%3B/status/500", r"\. or \.\."),
    (lambda o, f: o.url + "/files/%252e%252e/status/500", r"\. or \.\."),
    (lambda o, f: o.url + "/files/%25252e%25252e%25255c/status/500", r"\. or \.\."),
    (lambda o, f: f.allowed.as_uri() + "/../allowed-not/secret.txt", r"\. or \.\."),
    (lambda o, f: (f.outside / "secret.txt").as_uri(), "not under an allowed"),
    (lambda o, f: f.allowed.as_uri() + "-not/secret.txt", "not under an allowed"),
    (lambda o, f: f.url("link.txt"), "symbolic link"),                       # symlink escape
    (lambda o, f: o.url + "/go/out", "redirects to a URL that is not allowed"),
    (lambda o, f: o.url + "/files/missing", "answered 404"),
    (lambda o, f: o.url + "/go/loop", "more than 5 redirects"),
    (lambda o, f: f.url("nothere.txt"), "Cannot read"),
    (lambda o, f: "ftp://127.0.0.1/files/x", "http, https, file"),
    (lambda o, f: o.url.replace("://", "://user@") + "/files/hello.txt", "user information"),
    (lambda o, f: "http://127.0.0.1:1/files/x", "not under an allowed"),
])
@pytest.mark.parametrize("handling", ["copy", "proxy"])
def test_refused_urls_store_nothing(ext_repo, origin, files, state, make_url, message,
                                    handling):
    os.symlink(files.outside / "secret.txt", files.allowed / "link.txt")
    origin.redirects["out"] = "http://127.0.0.2:9/elsewhere"
    origin.redirects["loop"] = origin.url + "/go/loop"
    before = state(ext_repo)
    with pytest.raises(ExternalContentError, match=message):
        ext_repo.create_or_replace("/x", external=make_url(origin, files),
                                   external_handling=handling)
    assert state(ext_repo) == before


def test_redirect_inside_the_list_is_followed(ext_repo, origin):
    origin.redirects["in"] = origin.url + "/files/hello.txt"
    _, res = ext_repo.create_or_replace("/x", external=origin.url + "/go/in",
                                        external_handling="copy")
    with res.content as fh:
        assert fh.read() == TEXT


@pytest.mark.parametrize("handling", ["copy", "redirect", "proxy"])
def test_unreachable_source(repo_factory, state, handling):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed again: nothing listens there
    repo = repo_factory(external_content_allowed=(f"http://127.0.0.1:{port}/",))
    before = state(repo)
    with pytest.raises(ExternalContentError, match="Cannot reach"):
        repo.create_or_replace("/x", external=f"http://127.0.0.1:{port}/a",
                               external_handling=handling)
    assert state(repo) == before


@pytest.mark.parametrize("kwargs, message", [
    ({"external_handling": "move"}, "handling of copy, redirect, proxy"),
    ({"external_handling": None}, "not no handling"),
    ({"data": b"body"}, "takes no graph, triples, data or stream"),
    ({"media_type": "not a type"}, "not a media type"),
    ({"interaction_model": "ldp:BasicContainer"}, "makes a binary"),
])
def test_bad_arguments(ext_repo, origin, state, kwargs, message):
    before = state(ext_repo)
    args = {"external": origin.url + "/files/hello.txt", "external_handling": "copy", **kwargs}
    with pytest.raises(ExternalContentError, match=message):
        ext_repo.create_or_replace("/x", **args)
    assert state(ext_repo) == before


def test_normalize_url():
    assert normalize_url("HTTP://Example.ORG:80/a?b#c") == "http://example.org/a?b"
    assert normalize_url("https://example.org:8443") == "https://example.org:8443/"
    assert normalize_url("file:///tmp//a/b") == "file:///tmp/a/b"
    with pytest.raises(ExternalContentError):
        normalize_url("file://otherhost/etc/passwd")
    with pytest.raises(ExternalContentError):
        normalize_url("file:relative/path")
    # ;parameters and encoded percent signs are kept where no dot segment hides
    assert normalize_url("http://h/a;v=1/b%2520c/..x") == "http://h/a;v=1/b%2520c/..x"
    assert normalize_url("file:///tmp/..;x") == "file:///tmp/..%3Bx"    # a file name


def test_allow_list_whole_scheme():
    """``http://`` (or ``https://``) alone allows every URL of that scheme, any host
    and port, as the same line does in Fedora's allowed-external-content.txt (the
    Fedora API Test Suite serves its sources from a port it picks)."""
    allow = AllowList(["HTTP://"])
    assert allow
    assert allow.check("http://127.0.0.1:34567/file.txt") == "http://127.0.0.1:34567/file.txt"
    assert allow.check("http://example.org/a?b") == "http://example.org/a?b"
    for refused in ("https://example.org/a", "file:///etc/passwd", "http://u:p@example.org/",
                    "http://example.org/a/../b"):
        with pytest.raises(ExternalContentError):
            allow.check(refused)
    both = AllowList(["https://", "file:///srv/in"])
    assert both.check("https://a.org:8443/x") == "https://a.org:8443/x"
    with pytest.raises(ExternalContentError):
        both.check("http://a.org/x")
    with pytest.raises(ConfigError):                      # a scheme and nothing is not a URL
        AllowList(["http:"])


def test_whole_scheme_fetches_from_any_port(repo_factory, origin):
    repo = repo_factory(external_content_allowed=["http://"], external_content_timeout=5.0)
    _action, res = repo.create_or_replace("/c", external=origin.url + "/files/hello.txt",
                                          external_handling="copy")
    with res.content as fh:
        assert fh.read() == TEXT


def test_allow_list_file(tmp_path, origin):
    listed = tmp_path / "allowed.txt"
    listed.write_text(f"# comment\n\n{origin.url}/files/  # trailing comment\n")
    allow = AllowList.from_config((), str(listed))
    assert allow.check(origin.url + "/files/a") == origin.url + "/files/a"
    with pytest.raises(ExternalContentError):
        allow.check(origin.url + "/other")
    with pytest.raises(ConfigError, match="allowed_file"):
        AllowList.from_config((), str(tmp_path / "missing.txt"))
    with pytest.raises(ConfigError, match="external_content.allowed"):
        AllowList(["gopher://x/"])
