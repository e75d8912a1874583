"""The digest algorithms the repository computes and accepts, and each one's names.

One owner for these names: ``hashlib``'s (configuration, the binary store), the
HTTP ones of ``Digest`` and ``Want-Digest`` (RFC 3230, RFC 5843) and those of
the ``urn:<name>:<hex>`` digests Fedora writes in a binary's description.
"""
from __future__ import annotations

from types import MappingProxyType

__all__ = ["ALGORITHMS", "HTTP_NAMES", "URN_NAMES"]

#: ``hashlib`` names, strongest first.
ALGORITHMS = ("sha512", "sha256", "sha1", "md5")

#: hashlib name -> its name in HTTP ``Digest`` / ``Want-Digest``.
HTTP_NAMES = MappingProxyType({"sha512": "sha-512", "sha256": "sha-256", "sha1": "sha",
                               "md5": "md5"})

#: hashlib name -> its name in a digest URN (``<urn:sha-512:...>``).
URN_NAMES = MappingProxyType({"sha512": "sha-512", "sha256": "sha-256", "sha1": "sha1",
                              "md5": "md5"})
