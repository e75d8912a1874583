"""Archivists' operations on a repository, usable without click (``lsup-admin`` is
their front door). Nothing here prints; long operations report to a ``Progress``.

``datadir``: find, open and create a repository; ``stats``: figures by interaction
model; ``checks``: fixity and referential integrity; ``cleanup``: orphan content;
``backup``: backup and restore; ``migrate``: copy from another LDP server over
``http``, a small HTTP client; ``files`` and ``progress``: what those share.
"""
