"""The one vocabulary: every LDP, Fedora and other IRI the package names.

Every term constant is a ``str`` in the store's term form (``<http://...>``);
the ``*_NS`` names are the bare namespace IRIs. ``Namespace`` builds terms of a
namespace by attribute: ``LDP.contains == "<http://www.w3.org/ns/ldp#contains>"``.
Where a bare IRI is needed (a Link header, a literal's datatype), take it from
the term with ``bare_iri``; never write a second list of bare IRIs.
"""
from __future__ import annotations

from types import MappingProxyType


class Namespace:
    """A namespace whose attributes are canonical terms in it (``str(ns)`` is the
    bare IRI). ``iri``, ``term`` and ``prefix`` are the only reserved names."""

    __slots__ = ("iri",)

    def __init__(self, iri: str):
        self.iri = iri

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        return f"<{self.iri}{name}>"

    def __str__(self) -> str:
        return self.iri

    def __repr__(self) -> str:
        return f"Namespace({self.iri!r})"

    def term(self, name: str) -> str:
        """The canonical term of ``name`` (for names that are not identifiers)."""
        return f"<{self.iri}{name}>"

    @property
    def prefix(self) -> str:
        """The opening of every term in this namespace (``<`` + IRI)."""
        return "<" + self.iri


def bare_iri(term: str) -> str:
    """The bare IRI of an IRI term: ``bare_iri(LDP_CONTAINS) == LDP_NS + "contains"``."""
    if term[:1] != "<" or term[-1:] != ">":
        raise ValueError(f"Not an IRI term: {term[:100]!r}")
    return term[1:-1]


# --- namespaces -------------------------------------------------------------------

LDP_NS = "http://www.w3.org/ns/ldp#"
FCREPO_NS = "http://fedora.info/definitions/v4/repository#"
FCSYSTEM_NS = "info:fcsystem/"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
PREMIS_NS = "http://www.loc.gov/premis/rdf/v1#"
EBUCORE_NS = "http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#"
MEMENTO_NS = "http://mementoweb.org/ns#"
DCTERMS_NS = "http://purl.org/dc/terms/"
FCREPO_API_NS = "http://fedora.info/definitions/fcrepo#"   # Fedora API 1.0 Prefer values
OA_NS = "http://www.w3.org/ns/oa#"
HTTP_NS = "http://www.w3.org/2011/http#"
IANA_NS = "http://www.iana.org/assignments/relation/"
ACL_NS = "http://www.w3.org/ns/auth/acl#"
FOAF_NS = "http://xmlns.com/foaf/0.1/"
VCARD_NS = "http://www.w3.org/2006/vcard/ns#"

LDP = Namespace(LDP_NS)
FCREPO = Namespace(FCREPO_NS)
FCSYSTEM = Namespace(FCSYSTEM_NS)
RDF = Namespace(RDF_NS)
RDFS = Namespace(RDFS_NS)
XSD = Namespace(XSD_NS)
PREMIS = Namespace(PREMIS_NS)
EBUCORE = Namespace(EBUCORE_NS)
MEMENTO = Namespace(MEMENTO_NS)
DCTERMS = Namespace(DCTERMS_NS)
FCREPO_API = Namespace(FCREPO_API_NS)
OA = Namespace(OA_NS)
HTTP = Namespace(HTTP_NS)
IANA = Namespace(IANA_NS)
ACL = Namespace(ACL_NS)
FOAF = Namespace(FOAF_NS)
VCARD = Namespace(VCARD_NS)

#: Prefixes offered to serializers (prefix -> bare namespace IRI).
DEFAULT_NAMESPACES = MappingProxyType({
    "ldp": LDP_NS,
    "fcrepo": FCREPO_NS,
    "fcsystem": FCSYSTEM_NS,
    "rdf": RDF_NS,
    "rdfs": RDFS_NS,
    "xsd": XSD_NS,
    "premis": PREMIS_NS,
    "ebucore": EBUCORE_NS,
    "memento": MEMENTO_NS,
    "dcterms": DCTERMS_NS,
})


# --- terms ----------------------------------------------------------------------------

RDF_TYPE = RDF.type

LDP_RESOURCE = LDP.Resource
LDP_RDF_SOURCE = LDP.RDFSource
LDP_NON_RDF_SOURCE = LDP.NonRDFSource
LDP_CONTAINER = LDP.Container
LDP_BASIC_CONTAINER = LDP.BasicContainer
LDP_DIRECT_CONTAINER = LDP.DirectContainer
LDP_INDIRECT_CONTAINER = LDP.IndirectContainer
LDP_CONTAINS = LDP.contains
LDP_MEMBER = LDP.member
LDP_MEMBERSHIP_RESOURCE = LDP.membershipResource
LDP_HAS_MEMBER_RELATION = LDP.hasMemberRelation
LDP_IS_MEMBER_OF_RELATION = LDP.isMemberOfRelation
LDP_INSERTED_CONTENT_RELATION = LDP.insertedContentRelation
LDP_MEMBER_SUBJECT = LDP.MemberSubject
LDP_CONSTRAINED_BY = LDP.constrainedBy
LDP_PREFER_CONTAINMENT = LDP.PreferContainment
LDP_PREFER_MEMBERSHIP = LDP.PreferMembership
LDP_PREFER_MINIMAL_CONTAINER = LDP.PreferMinimalContainer

FCREPO_RESOURCE = FCREPO.Resource
FCREPO_CONTAINER = FCREPO.Container
FCREPO_BINARY = FCREPO.Binary
FCREPO_REPOSITORY_ROOT = FCREPO.RepositoryRoot
FCREPO_CREATED = FCREPO.created
FCREPO_CREATED_BY = FCREPO.createdBy
FCREPO_LAST_MODIFIED = FCREPO.lastModified
FCREPO_LAST_MODIFIED_BY = FCREPO.lastModifiedBy
FCREPO_HAS_PARENT = FCREPO.hasParent
FCREPO_HAS_VERSION = FCREPO.hasVersion
FCREPO_INBOUND_REFERENCES = FCREPO.InboundReferences
FCREPO_SERVER_MANAGED = FCREPO.ServerManaged
FCREPO_API_PREFER_INBOUND_REFERENCES = FCREPO_API.PreferInboundReferences
FCREPO_API_SERVER_MANAGED = FCREPO_API.ServerManaged
OA_PREFER_CONTAINED_DESCRIPTIONS = OA.PreferContainedDescriptions

FCSYSTEM_TOMBSTONE = FCSYSTEM.Tombstone
FCSYSTEM_BURIED_IN = FCSYSTEM.buriedIn
FCSYSTEM_DELETED = FCSYSTEM.deleted
FCSYSTEM_MEMBERSHIP_FROM = FCSYSTEM.membershipFrom
FCSYSTEM_HAS_TOMBSTONE = FCSYSTEM.hasTombstone

PREMIS_HAS_MESSAGE_DIGEST = PREMIS.hasMessageDigest
PREMIS_HAS_SIZE = PREMIS.hasSize
EBUCORE_HAS_MIME_TYPE = EBUCORE.hasMimeType
EBUCORE_FILENAME = EBUCORE.filename

RDFS_LABEL = RDFS.label
RDFS_COMMENT = RDFS.comment

MEMENTO_MEMENTO = MEMENTO.Memento
MEMENTO_TIMEMAP = MEMENTO.TimeMap
MEMENTO_TIMEGATE = MEMENTO.TimeGate
MEMENTO_ORIGINAL_RESOURCE = MEMENTO.OriginalResource
MEMENTO_DATETIME = MEMENTO.mementoDatetime

HTTP_RESPONSE = HTTP.Response
HTTP_STATUS_CODE_VALUE = HTTP.statusCodeValue
HTTP_REASON_PHRASE = HTTP.reasonPhrase

IANA_DESCRIBEDBY = IANA.describedby
IANA_DESCRIBES = IANA.describes

XSD_DATETIME = XSD.dateTime
XSD_LONG = XSD.long
XSD_INT = XSD.int
