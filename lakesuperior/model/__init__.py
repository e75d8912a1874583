"""The LDP model: resources, containment, membership, versions, tombstones.

Pure logic over a store transaction (``model.context.Context``); no HTTP, no
global state; access control is above it, in ``auth``. Every module, lowest
first: each imports only modules listed before it (``tests/test_layers.py``
checks the list against the folder).

* ``namespaces``: the one vocabulary (terms, bare namespaces, ``bare_iri``);
* ``uids``: identifiers, graph names, internal <-> public URIs;
* ``literals``: the literals the model writes and reads (via ``store.terms``);
* ``interaction``: interaction models and the type-change rule;
* ``events``: the changes a write records, the outbox, the change feed's entries;
* ``context``: ``Settings`` and the ``Context`` of one call;
* ``lookup``: what is at a uid (a live resource's model, or a tombstone);
* ``archival``: Archival Groups (a container versioned with its descendants);
* ``external``: how a binary refers to external content (its sources: ``store.external``);
* ``inputs``: reading client input before the write;
* ``versions``: versions sharing the current record;
* ``server_managed``: which triples the server manages, and writing them;
* ``containment``: ``ldp:contains`` and resource graphs;
* ``membership``: Direct/Indirect container configuration and membership triples;
* ``validation``: checks of client triples (server-managed, single subject, refint);
* ``nonrdf``: binaries and their descriptions;
* ``resource``: the returned views and ``load``;
* ``lifecycle``: create / replace / update;
* ``sparql_update``: PATCH with SPARQL Update;
* ``tombstones``: delete, resurrect, purge;
* ``checks``: fixity, integrity, stats.
"""
