"""The LDP model: resources, containment, membership, versions, tombstones.

Pure logic over a store transaction (``model.context.Context``); no HTTP, no
global state. Modules: ``namespaces`` (vocabulary), ``uids`` (identifiers and
URI mapping), ``ldp`` (interaction models, server-managed triples, input
checks, containment), ``membership``, ``inputs`` (reading client input),
``nonrdf`` (binaries), ``lifecycle`` (create / replace / update),
``sparql_update``, ``tombstones``, ``versions``, ``resource`` (the returned
views and ``get``), ``admin``.
"""
