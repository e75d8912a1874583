"""OCFL storage roots as Fedora 6 writes them: export this repository into one,
import one into this repository (docs/ocfl.md).

``storage``: OCFL itself (root, layout, inventories); ``objects``: writing one
object's versions; ``fedora``: Fedora's ids, paths and header files;
``snapshot``: a resource's state as exported; ``export`` and ``imports``: the
two directions.
"""
