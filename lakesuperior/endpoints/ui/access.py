"""The "Access" page of a resource: its effective ACL in words, and (for an agent
with Control there) "Grant" and "Revoke".

The ACL is read and written through the request's agent view
(``effective_acl``, ``set_acl``: Control required), in one write per change.
A resource that inherits its ACL gets one of its own on its first change,
holding what it inherited (``sharing.adopt``) so that nothing else changes.
"""
from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, unquote

from flask import Response, current_app, url_for
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior.auth import sharing
from lakesuperior.auth.sharing import EVERYONE, SIGNED_IN, Grant, Grantee
from lakesuperior.endpoints import authn
from lakesuperior.endpoints.errors import BadRequest
from lakesuperior.endpoints.ui.common import (
    Repo,
    field,
    page,
    render,
    repository,
    see_other,
    target_uid,
    urls,
)
from lakesuperior.rdfio import Triple

_IRI_SAFE = ":/#?&=@!$()*+,;-._~%"
_VERBS = {"Read": "read", "Write": "write", "Append": "append to", "Control": "control"}


def _iri(uid: str) -> str:
    return page(uid)


def _acl_iri(uid: str) -> str:
    return _iri(uid).rstrip("/") + "/fcr:acl"


def _webid_base() -> str:
    return str(current_app.extensions["lakesuperior"].config.auth_webid_base)


def grantee_name(g: Grantee) -> str:
    """Who a grantee is, in words: "everyone", "signed-in users", a user name, a
    group's path."""
    if g == EVERYONE:
        return "everyone"
    if g == SIGNED_IN:
        return "signed-in users"
    iri = g.term[1:-1]
    if g.kind == "user" and iri.startswith(_webid_base()):
        return unquote(iri[len(_webid_base()):])
    base = urls().base
    if g.kind == "group" and iri.startswith(base + "/"):
        return "group " + iri[len(base):]
    return ("group " if g.kind == "group" else "") + iri


def _sentence(grants: list[Grant]) -> list[str]:
    """One phrase per grantee: "alice may read and write"."""
    by_who: dict[Grantee, list[str]] = {}
    for g in grants:
        by_who.setdefault(g.grantee, [])
        if g.mode not in by_who[g.grantee]:
            by_who[g.grantee].append(g.mode)
    order = sorted(by_who, key=lambda w: (w != EVERYONE, w != SIGNED_IN, w))
    out = []
    for who in order:
        verbs = [_VERBS[m] for m in sharing.MODES if m in by_who[who]]
        listed = verbs[0] if len(verbs) == 1 else ", ".join(verbs[:-1]) + " and " + verbs[-1]
        out.append(f"{grantee_name(who)} may {listed}")
    return out


def access_page() -> Response:
    """GET /ui/access?path=: who may do what here, and where it comes from."""
    uid = target_uid()
    repo = repository()
    source, triples = repo.effective_acl(uid, base_uri=urls().base)
    inherited = source is not None and source != uid
    grants = sharing.grants(triples, f"<{_iri(uid)}>", inherited=inherited) if source else []
    phrases = _sentence(grants)
    summary = "; ".join(phrases) if phrases else "Nobody but administrators has access"
    if summary.startswith(("everyone", "signed-in")):
        summary = summary[0].upper() + summary[1:]
    if inherited:
        summary += f"; inherited from {source}"
    rows = [(grantee_name(g.grantee), g.grantee, g.mode, g.below) for g in grants]
    return render("access.html", uid=uid, title=f"Access to {uid}", summary=summary,
                  rows=rows, source=source, inherited=inherited, modes_offered=sharing.MODES,
                  back=page(uid), source_url=url_for("ui.access", path=source)
                  if inherited and source else None)


def _grantee() -> Grantee:
    who = field("who")
    name = field("name").strip()
    if who == "everyone":
        return EVERYONE
    if who == "signed-in":
        return SIGNED_IN
    if who not in ("user", "group") or not name:
        raise BadRequest("Say whom to grant access to: a user (with a user name), a group "
                         "(with its path), everyone, or signed-in users")
    if ":" in name and not name.startswith("/"):     # a WebID, a group's IRI
        return Grantee(who, f"<{quote(name, safe=_IRI_SAFE)}>")
    if who == "group":
        path = name if name.startswith("/") else "/" + name
        return Grantee("group", f"<{urls().base}{quote(path, safe=_IRI_SAFE)}>")
    agent = current_app.extensions[authn.EXTENSION].user_agent(name, False)
    return Grantee("user", f"<{agent.webid}>")


def _mode() -> str:
    mode = field("mode")
    if mode not in sharing.MODES:
        raise BadRequest(f"Unknown access mode {mode!r:.40}: one of {', '.join(sharing.MODES)}")
    return mode


def _change(repo: Repo, uid: str, edit: Callable[[list[Triple]], list[Triple]]) -> None:
    """Apply ``edit`` (own ACL triples -> new triples) to the ACL of ``uid`` in one write."""
    base = urls().base
    resource = f"<{_iri(uid)}>"

    def write() -> None:
        source, triples = repo.effective_acl(uid, base_uri=base)
        own: list[Triple] = triples if source == uid else sharing.adopt(
            triples, _acl_iri(uid), resource)
        repo.set_acl(uid, triples=edit(own), base_uri=base)
    repo.transact(write)


def grant() -> BaseResponse:
    """POST /ui/access/grant: give a mode to a grantee, here (and below)."""
    uid = target_uid()
    g = Grant(_grantee(), _mode(), field("below") == "yes")
    resource = f"<{_iri(uid)}>"
    _change(repository(), uid, lambda own: sharing.grant(own, _acl_iri(uid), resource, g))
    return see_other(url_for("ui.access", path=uid))


def revoke() -> BaseResponse:
    """POST /ui/access/revoke: take a mode away from a grantee (``kind``, ``term``)."""
    uid = target_uid()
    kind, term = field("kind"), field("term")
    if kind not in ("user", "group", "class") or not (term.startswith("<")
                                                     and term.endswith(">")):
        raise BadRequest("The form names no grantee to revoke")
    who, mode = Grantee(kind, term), _mode()
    resource = f"<{_iri(uid)}>"
    _change(repository(), uid,
            lambda own: sharing.revoke(own, _acl_iri(uid), resource, who, mode))
    return see_other(url_for("ui.access", path=uid))

