"""Domain errors. No HTTP here: ``endpoints/errors.py`` maps them to statuses once."""
from __future__ import annotations


class LakesuperiorError(Exception):
    """Base of every error the library raises on purpose."""


# --- configuration and storage -------------------------------------------

class ConfigError(LakesuperiorError):
    """A configuration file or value is missing or invalid."""


class StoreError(LakesuperiorError):
    """The store cannot do what was asked (bad input or bad state)."""


class StoreFormatError(StoreError):
    """The data directory holds a store of an unknown or newer format."""


class InsufficientStorageError(StoreError):
    """There is no room for a write (the store's map or the disk is full);
    nothing of it was kept. The message says what is full, without host paths."""


class StoreFullError(InsufficientStorageError):
    """A write does not fit in the store's map, even after growing it once."""


class DiskFullError(InsufficientStorageError):
    """The file system holding the data is full or over quota (ENOSPC, EDQUOT)."""


class BinaryStoreUnavailableError(StoreError):
    """The binary store (an S3 object store) cannot be reached or fails: the
    request's binary content was neither read nor stored; try again later."""


class ContentChangedError(StoreError):
    """Content read twice to be stored (hashed, then sent under its digest's key)
    was not the same the second time: a file changed while it was being stored.
    Nothing was stored."""


class StoreBusyError(StoreError):
    """The store's map must be remapped (another process grew it) while other
    transactions of this process are open: retry when they have ended."""


class StoreBackendError(StoreError):
    """LMDB failed (I/O error, corrupt file, reader table full, ...)."""


class TermError(StoreError, ValueError):
    """A string is not a valid RDF term."""


# --- resources --------------------------------------------------------------

class ResourceError(LakesuperiorError):
    """Base for errors about one resource; carries its uid."""

    def __init__(self, uid: str | None = None, msg: str | None = None):
        self.uid = uid
        super().__init__(msg or self.default_message())

    def default_message(self) -> str:
        return f"Error on resource {self.uid}"


class ResourceNotExistsError(ResourceError):
    def default_message(self) -> str:
        return f"Resource {self.uid} does not exist"


class ResourceExistsError(ResourceError):
    def default_message(self) -> str:
        return f"Resource {self.uid} already exists"


class TombstoneError(ResourceError):
    """The resource was deleted and left a tombstone."""

    def __init__(self, uid: str | None = None, ts: str | None = None, msg: str | None = None,
                 top: str | None = None):
        self.ts = ts
        #: The uid whose tombstone can be purged (``forget``) or resurrected: ``uid``
        #: itself, or the ancestor it was deleted with.
        self.top = top if top is not None else uid
        super().__init__(uid, msg)

    def default_message(self) -> str:
        return f"Resource {self.uid} was deleted (tombstone)"


class InvalidResourceError(ResourceError):
    """The uid or the request is not valid for a resource (path tricks, reserved names)."""


class InvalidVersionError(InvalidResourceError):
    """A version's datetime is malformed, missing or out of range."""


class VersionExistsError(ResourceExistsError):
    """The resource already has a version at that datetime."""


class ArchivalGroupError(ResourceError):
    """An Archival Group cannot be made there (inside another group)."""


class IncompatibleLdpTypeError(ResourceError):
    """The requested interaction model conflicts with the resource's."""


class InvalidTypeLinkError(IncompatibleLdpTypeError):
    """A requested type that no resource here can have (an unknown ``rel="type"``,
    a binary Archival Group)."""


class ServerManagedTermError(ResourceError):
    """The input tries to set server-managed triples under strict handling."""


class SingleSubjectError(ResourceError):
    """The input has triples about subjects other than the resource."""


class InvalidTripleError(ResourceError):
    """A triple is not acceptable (e.g. a literal subject)."""


class AclError(InvalidTripleError):
    """An access control list this server does not accept (an authorization
    without a mode or an agent, a target or group outside the repository)."""


class RefIntViolationError(ResourceError):
    """Strict referential integrity: a link points to a missing repository resource."""


class InvalidDescriptionError(ResourceError):
    """A binary's description gives an unusable ``ebucore:hasMimeType`` or
    ``ebucore:filename`` (not one literal, or not a media type)."""


class ChecksumValidationError(ResourceError):
    """A client-supplied digest does not match the content."""


class UnsupportedDigestError(LakesuperiorError):
    """A digest algorithm we do not support."""


# --- input formats ------------------------------------------------------------

class InvalidHeaderError(LakesuperiorError, ValueError):
    """A request header that does not follow its grammar; the message names the
    header and says what is wrong."""


class UnsupportedMediaTypeError(LakesuperiorError):
    """A media type we cannot read (or write)."""


class UnwritableError(UnsupportedMediaTypeError):
    """Data that the media type asked for cannot carry (RDF/XML: a predicate with
    no XML name form, a character XML 1.0 forbids)."""


class RdfParseError(LakesuperiorError):
    """Malformed RDF; ``line`` and ``column`` say where, when known."""

    def __init__(self, msg: str, line: int | None = None, column: int | None = None):
        self.line = line
        self.column = column
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"{msg}{where}")


class SparqlError(LakesuperiorError):
    """A SPARQL query or update that cannot be parsed or run."""


class QueryTimeoutError(SparqlError):
    """A query ran over the configured time limit and was stopped."""


class QueryTooLargeError(SparqlError):
    """A query's result (or a sort in it) holds more rows than the configured bound."""


class TooManyQueriesError(SparqlError):
    """A client already runs as many queries at once as it may; ``retry_after``:
    seconds to wait before sending the next."""

    def __init__(self, msg: str, retry_after: float):
        self.retry_after = retry_after
        super().__init__(msg)


# --- binaries and HTTP input ------------------------------------------------

class InvalidDigestError(StoreError, ValueError):
    """A digest string is malformed (wrong length, not hex or base64)."""


class BinaryNotFoundError(LakesuperiorError):
    """No stored binary has this digest."""


class PayloadTooLargeError(LakesuperiorError):
    """The content is larger than the allowed maximum."""


class ExternalContentError(LakesuperiorError):
    """External content (Fedora API 1.0 section 3.9) that cannot be taken: a
    malformed or unsupported request, a URL outside the allow-list, or a source
    that fails (unreachable, an error status, too slow, too large)."""


class RangeNotSatisfiableError(LakesuperiorError):
    """No range of a ``Range`` header fits the representation; ``size`` is its length."""

    def __init__(self, size: int, msg: str | None = None):
        self.size = size
        super().__init__(msg or f"No requested range is satisfiable (length {size})")


# --- HTTP transactions (fcr:tx) --------------------------------------------

class TransactionError(LakesuperiorError):
    """An HTTP transaction cannot be used as asked."""


class TransactionNotFoundError(TransactionError):
    """No transaction has this id."""


class TransactionClosedError(TransactionError):
    """The transaction was committed, rolled back or has expired; ``state`` says which."""

    def __init__(self, tx_id: str, state: str):
        self.state = state
        super().__init__(f"Transaction {tx_id} is {state}: it takes no more requests")


class TransactionConflictError(TransactionError):
    """Committing would overwrite a change made outside the transaction, or a staged
    request no longer applies; nothing was committed."""


class TransactionLimitError(TransactionError):
    """Too many open transactions, or too many requests staged in one."""


class TransactionTooLargeError(TransactionLimitError, PayloadTooLargeError):
    """The request bodies staged in one transaction would exceed the byte limit."""


class TransactionOwnerError(TransactionError):
    """The transaction was opened by another user."""


# --- authentication and access control --------------------------------------

class AuthenticationError(LakesuperiorError):
    """Credentials were given but are wrong or malformed (the message does not
    repeat them)."""


class BearerTokenError(AuthenticationError):
    """A bearer token (JWT) that cannot be believed: malformed, unsigned, signed with
    another key or algorithm, expired, or without the claims it needs."""


class ClientTimeoutError(LakesuperiorError):
    """The client stopped sending its request for longer than the server waits."""


class TryLaterError(LakesuperiorError):
    """Refused for now; trying again after ``retry_after`` seconds may succeed."""

    def __init__(self, msg: str, retry_after: float):
        self.retry_after = retry_after
        super().__init__(msg)


class TooManyFailuresError(TryLaterError):
    """Too many wrong passwords lately, for this user name or from this address:
    credentials are not checked until the backoff ends."""


class VerificationBusyError(TryLaterError):
    """As many passwords as allowed are being verified at once; none became free in time."""


class AccessDeniedError(LakesuperiorError):
    """Access control refuses ``mode`` (an ``acl:`` mode name such as ``Write``) on
    ``uid`` to an agent; ``authenticated`` tells whether the agent was a known user
    (an anonymous agent may succeed by authenticating)."""

    def __init__(self, uid: str | None, mode: str, authenticated: bool,
                 msg: str | None = None):
        self.uid = uid
        self.mode = mode
        self.authenticated = authenticated
        where = "/" + (uid or "").lstrip("/")
        super().__init__(msg or f"{mode} access to {where} is not granted to this agent")


# --- administration and tools -----------------------------------------------

class AdminError(LakesuperiorError):
    """An administrative operation cannot be done as asked; nothing was changed."""


class NoRepositoryError(AdminError):
    """The data directory holds no repository."""


class MigrationError(AdminError):
    """The migration source failed or sent something that is not usable."""


class OcflError(AdminError):
    """An OCFL storage root or object that cannot be written or read as asked (the
    message names the object and the file); the object was not imported."""


class HttpClientError(LakesuperiorError):
    """A remote server could not be reached, or did not answer in HTTP we understand."""


class FeedGapError(LakesuperiorError):
    """The change feed no longer holds the events after a position (they are older
    than ``messaging.retention_days``, or the repository was replaced): whoever
    follows the feed from there must rebuild from the current state."""


class ReplicaError(LakesuperiorError):
    """A read replica (an external SPARQL store) refused a change, could not be
    reached, or answered what is not HTTP or not what was asked."""


class BenchmarkError(LakesuperiorError):
    """The benchmark cannot go on (a request failed, an option is unusable)."""


class BrokerError(LakesuperiorError):
    """The message broker cannot be reached, refused the login, or did not
    acknowledge events (writes never wait for it: the publisher retries)."""
