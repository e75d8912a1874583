"""The constraints document (LDP 4.2.1.6), served at ``/constraints``.

Each section has an anchor that error responses link with
``rel="http://www.w3.org/ns/ldp#constrainedBy"`` (see ``errors.CONSTRAINT_ANCHORS``).
The same sections are rendered as HTML and as RDF (``rdfs:label`` and
``rdfs:comment`` of ``<constraints#anchor>``).
"""
from __future__ import annotations

from lakesuperior.model.context import literal_term
from lakesuperior.model.namespaces import RDFS
from lakesuperior.model.uids import MAX_SEGMENT_LENGTH, MAX_UID_LENGTH

SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("interaction-models", "Interaction models",
     "A resource created without a Link rel=\"type\" header is an ldp:BasicContainer if its "
     "body is RDF (or empty), an ldp:NonRDFSource (binary) otherwise. A Link rel=\"type\" "
     "header with ldp:RDFSource, ldp:BasicContainer, ldp:DirectContainer, "
     "ldp:IndirectContainer or ldp:NonRDFSource chooses the model; ldp:NonRDFSource makes a "
     "binary whatever the Content-Type. The interaction model of an existing resource cannot "
     "change: a PUT or PATCH that asks for another one is refused with 409 Conflict. Only "
     "containers accept POST; binaries cannot contain resources."),
    ("server-managed", "Server-managed triples",
     "The server manages ldp:contains, the rdf:type values in the LDP and Fedora namespaces, "
     "every fcrepo: predicate (created, createdBy, lastModified, lastModifiedBy, hasParent) "
     "and the size, digest and media type of binaries. A PUT may send them back unchanged "
     "(they are ignored, and so are fcrepo:created, createdBy, lastModified and "
     "lastModifiedBy); a request that changes any other one is refused with 409 Conflict. "
     "With 'Prefer: handling=lenient' all server-managed triples in the request are dropped; "
     "with 'Prefer: handling=strict' any server-managed triple that differs from the current "
     "state is refused."),
    ("single-subject", "Subjects",
     "The triples of a resource are about the resource itself, its hash URIs (<#part>) or "
     "blank nodes; triples about other subjects are refused with 409 Conflict."),
    ("triples", "Membership configuration",
     "A Direct or Indirect container has exactly one ldp:membershipResource (default: "
     "itself), one ldp:hasMemberRelation or ldp:isMemberOfRelation (default: "
     "ldp:hasMemberRelation ldp:member) and, for an Indirect container, one "
     "ldp:insertedContentRelation (default ldp:MemberSubject); their values are IRIs. "
     "ldp:contains cannot be used as a membership predicate."),
    ("referential-integrity", "Referential integrity",
     "Depending on the server configuration, links to repository resources that do not "
     "exist are kept (off, the default), dropped and named in the response's "
     "Lakesuperior-Dropped-Links header (lenient), or refused with 409 Conflict (strict)."),
    ("digests", "Digests",
     "A Digest header on a binary upload (md5, sha, sha-256 or sha-512, hex or base64) must "
     "match the content, else the request is refused with 409 Conflict; other algorithms "
     "are refused with 400 Bad Request."),
    ("media-types", "Media types",
     "RDF is read from Turtle, N-Triples, JSON-LD (with embedded contexts only), RDF/XML "
     "and N3; malformed RDF is refused with 400 Bad Request. An RDF source cannot be "
     "replaced with a non-RDF body (415 Unsupported Media Type). Content-Type "
     "message/external-body is not supported (415): see External content. A binary's "
     "description may set its ebucore:hasMimeType (a media type) and ebucore:filename, "
     "one literal each; anything else is refused with 400 Bad Request."),
    ("transactions", "HTTP transactions",
     "POST /rest/fcr:tx opens a transaction; requests with Atomic-ID: <its URI> run in it. "
     "A transaction that is unknown, committed, rolled back or expired cannot take requests "
     "(409; its own URI answers 404 or 410); another user's cannot be used (403). A commit "
     "is refused with 409, and nothing is applied, if a resource the transaction read or "
     "wrote was changed by someone else since it first did. The server limits the "
     "transactions open at once and the requests (409) and body bytes (413) one holds."),
    ("patch", "PATCH",
     "PATCH takes application/sparql-update: INSERT DATA, DELETE DATA, DELETE WHERE and "
     "DELETE/INSERT ... WHERE on the resource's own triples. Named graphs, SERVICE and graph "
     "management operations are refused, and so are what the SPARQL 1.1 grammar forbids: "
     "variables in INSERT DATA and DELETE DATA, blank nodes in what is deleted (a blank "
     "node cannot name a stored one). A binary's content cannot be patched: PATCH its "
     "description at <binary>/fcr:metadata."),
    ("external-content", "External content",
     "A binary's content may be at a URL (Fedora API 1.0 section 3.9): one Link: <URL>; "
     "rel=\"http://fedora.info/definitions/fcrepo#ExternalContent\"; handling=\"copy\", "
     "\"redirect\" or \"proxy\" (optionally type=\"media/type\") on a PUT or POST with no "
     "body. Only http:, https: and file: URLs under a prefix of the server's allow-list "
     "(external_content.allowed) are accepted, after normalization (no . or .. segments, "
     "file: paths resolved, symbolic links followed); redirects are followed only to "
     "allowed URLs, at most 5. Anything else (no or another handling, a malformed Link, "
     "several of them, a body with it, a source that cannot be read) is refused with "
     "400 Bad Request and nothing is stored; a proxied source that fails on a read "
     "answers 502 Bad Gateway."),
    ("size", "Request size",
     "Request bodies larger than the configured max_body_size are refused with 413."),
    ("tombstones", "Deleted resources",
     "DELETE leaves a tombstone: the resource and everything under it answer 410 Gone, with "
     "a Link rel=\"hasTombstone\" to <resource>/fcr:tombstone. DELETE on the tombstone "
     "purges it for good; POST on it brings the resource back. URIs of deleted resources "
     "are not reused by POST."),
    ("versions", "Versions",
     "Every resource is versioned (a Memento TimeGate and OriginalResource). With "
     "versioning.auto (the default, as Fedora 6) every change makes a memento at its "
     "datetime; POST to <resource>/fcr:versions without Memento-Datetime makes one of the "
     "current state. A memento's URI is <resource>/fcr:versions/<yyyyMMddHHmmss> (UTC, one "
     "per second: two changes in the same second make one memento, of the later state). A "
     "POST with Memento-Datetime (an HTTP-date, not in the future) adds a historic memento "
     "whose state is the body (RDF, or a binary's content with its Content-Type) or, without "
     "a body, the current state: a malformed date is 400, a memento at that second already "
     "409. DELETE on a memento removes it. An Archival Group (Link: <http://fedora.info/"
     "definitions/v4/repository#ArchivalGroup>; rel=\"type\" on creation) is a container "
     "versioned with its descendants as one unit; groups cannot be nested (409) and a "
     "binary cannot be one (400); other rel=\"type\" values than LDP's are refused (400)."),
    ("access-control", "Access control lists",
     "The ACL of a resource is at <resource>/fcr:acl (Link rel=\"acl\"); reading or "
     "changing it needs acl:Control. Its subjects are the ACL and its hash URIs "
     "(<#readers>). Nodes typed acl:Authorization with an acl:mode (acl:Read, acl:Write, "
     "acl:Append, acl:Control) and an agent (acl:agent, acl:agentClass foaf:Agent or "
     "acl:AuthenticatedAgent, acl:agentGroup) grant; anything else is stored and grants "
     "nothing. In an acl:Authorization, acl:accessTo names the ACL's resource or a "
     "resource below it, acl:default the ACL's resource, acl:agentGroup a vcard:Group in "
     "this repository; otherwise the ACL is refused with 409 Conflict, malformed RDF with "
     "400. A request that names a resource's ACL with Link: <...>; rel=\"acl\" is refused "
     "with 400 Bad Request: the ACL is always <resource>/fcr:acl."),
    ("paths", "Paths",
     f"Paths are made of non-empty segments of at most {MAX_SEGMENT_LENGTH} characters, "
     f"{MAX_UID_LENGTH} in all (counted as in a URL); '.', '..', encoded slashes (%2F), "
     "backslashes, control characters and segments starting with 'fcr:' (reserved for "
     "Fedora endpoints) are refused."),
)


def triples(url: str) -> list[tuple[str, str, str]]:
    """The document as RDF: one ``<url#anchor>`` per section."""
    out = [(f"<{url}>", RDFS.label, literal_term("Lakesuperior constraints"))]
    for anchor, title, text in SECTIONS:
        node = f"<{url}#{anchor}>"
        out.append((f"<{url}>", RDFS.seeAlso, node))
        out.append((node, RDFS.label, literal_term(title)))
        out.append((node, RDFS.comment, literal_term(text)))
    return out
