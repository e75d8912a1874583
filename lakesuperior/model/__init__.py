"""The LDP model: resources, containment, membership, versions, tombstones.

Pure logic over a store transaction (``model.context.Context``); no HTTP, no
global state. Modules, lowest first (each imports only modules listed before
it):

* ``namespaces``: the one vocabulary (terms, bare namespaces, ``bare_iri``);
* ``uids``: identifiers, graph names, internal <-> public URIs;
* ``literals``: the literals the model writes and reads (via ``store.terms``);
* ``context``: ``Settings`` and the ``Context`` of one call;
* ``interaction``: interaction models and the type-change rule;
* ``lookup``: what is at a uid (a live resource's model, or a tombstone);
* ``server_managed``: which triples the server manages, and writing them;
* ``containment``: ``ldp:contains`` and resource graphs;
* ``membership``: Direct/Indirect container configuration and membership triples;
* ``validation``: checks of client triples (server-managed, single subject, refint);
* ``inputs``: reading client input before the write; ``nonrdf``: binaries;
* ``versions``: snapshots; ``resource``: the returned views and ``load``;
* ``lifecycle``: create / replace / update; ``sparql_update``: PATCH;
* ``tombstones``: delete, resurrect, purge; ``checks``: fixity, integrity, stats.
"""
