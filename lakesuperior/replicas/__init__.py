"""Read replicas: external SPARQL stores kept in step with the change feed
(``lsup-admin sync``, docs/replicas.md).

``graphs``   what a replica holds of a resource (its named graph), the filter's agent
``targets``  the stores, over HTTP: Graph Store Protocol, N-Quads loads, SPARQL Update
``state``    each target's checkpoint and last error, in ``DATA_DIR/replicas/``
``replica``  one target: catching up from the feed, reindexing
``runner``   several targets at once, once or following, with backoff
``status``   lag and errors, for ``lsup-admin sync status`` and ``/admin/stats``
"""
