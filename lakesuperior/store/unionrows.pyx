"""Reading the union index's rows: graph numbers, ``lit``, sorted pair sets.

The layout is in ``layout.pxd``; ``indexer.pyx`` writes the rows, ``reads.pyx``
answers union patterns with these helpers.
"""
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport bsearch, qsort
from libc.string cimport memcmp, memcpy
from cpython.bytes cimport PyBytes_AS_STRING

from lakesuperior.store.env cimport StoreEnv
from lakesuperior.store.layout cimport (GNUM_SIZE, LIT_VAL_SIZE, be, be32, get_be32, id_at,
                                        put_be)
from lakesuperior.store.txn cimport Txn

from lakesuperior.exceptions import StoreError

# How many graph prefixes a store remembers its graphs' answers for.
MAX_PREFIXES = 8


cdef uint32_t graph_number(itxn, StoreEnv store, uint64_t gid) except? 0:
    """The index's number for graph ``gid`` (0: the index never met it)."""
    raw = itxn.get(be(gid), db=store.idb_gn)
    if raw is None:
        return 0
    if len(raw) != GNUM_SIZE:
        raise StoreError("Corrupt index: a graph number is truncated")
    return get_be32(<const unsigned char *>PyBytes_AS_STRING(raw))


cdef uint64_t graph_of(itxn, StoreEnv store, uint32_t gnum) except? 0:
    """The graph id of graph number ``gnum`` (0: none)."""
    raw = itxn.get(be32(gnum), db=store.idb_ng)
    return id_at(raw, 0) if raw is not None else 0


cdef int _cmp12(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, 12)


cdef int _cmp16(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, 16)


cdef int _cmp28(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, 28)


cdef Py_ssize_t sort_unique_rows(unsigned char *rows, Py_ssize_t n, Py_ssize_t size) noexcept nogil:
    """Sort ``n`` packed rows of ``size`` bytes (12, 16 or 28: the index's rows
    and pair keys) in place and drop repeats; the new n."""
    if n < 2:
        return n
    qsort(rows, n, size, _cmp12 if size == 12 else (_cmp16 if size == 16 else _cmp28))
    cdef Py_ssize_t i, j = 0
    for i in range(1, n):
        if memcmp(rows + i * size, rows + j * size, size) != 0:
            j += 1
            if j != i:
                memcpy(rows + j * size, rows + i * size, size)
    return j + 1


cdef bint has16(const unsigned char *keys, Py_ssize_t n, const void *key) noexcept nogil:
    """Whether sorted 16-byte ``keys`` hold ``key``."""
    return bsearch(key, keys, n, 16, _cmp16) != NULL


cdef bytearray prefix_flags(itxn, StoreEnv store, str graph_prefix):
    """The store's answers, by graph number, to "does the graph's name start
    with ``graph_prefix``" (0: not known yet, 1: yes, 2: no). A graph number
    names one graph for the life of the index (``state.gen``), and a graph id
    one name, so an answer never goes stale; a new index starts afresh."""
    gen = itxn.get(b"gen", db=store.idb_state)
    if gen != store.prefix_gen:
        store.prefix_ok = {}
        store.prefix_gen = gen
    flags = store.prefix_ok.get(graph_prefix)
    if flags is None:
        if len(store.prefix_ok) >= MAX_PREFIXES:
            store.prefix_ok.clear()
        flags = store.prefix_ok[graph_prefix] = bytearray()
    return flags


cdef int learn_prefixes(Txn t, itxn, bytearray flags, str graph_prefix,
                        const unsigned char *g, Py_ssize_t n, Py_ssize_t stride) except -1:
    """Set ``flags`` (``prefix_flags``) for the graph numbers of ``n`` index rows
    (``g``: the first row's, ``stride`` bytes apart; sorted) not known yet. Their
    names are read in id order with one cursor: read in row order, they land all
    over ``rec`` and map many more pages. A name the snapshot lacks stays unknown.
    ``flags`` is shared by the store's threads, and another may extend (so move)
    it while a read here lets the GIL go: its size and buffer are read afresh
    at each use, never kept across a read."""
    cdef Py_ssize_t i
    cdef uint32_t gnum, prev = 0, top = 0
    cdef uint64_t gid
    cdef list todo = []
    for i in range(n):
        gnum = get_be32(g + i * stride)
        if gnum == prev or (gnum < len(flags) and (<const unsigned char *>flags)[gnum]):
            continue
        prev = gnum
        gid = graph_of(itxn, t.store, gnum)
        t.store.mapped(1)         # a page of ``ng`` (the trimmer looks every so often)
        if gid:
            todo.append((gid, gnum))
            top = max(top, gnum)
    if not todo:
        return 0
    todo.sort()
    cdef bytearray ids = bytearray(8 * len(todo))
    for i in range(len(todo)):
        put_be(<unsigned char *>ids + 8 * i, todo[i][0])
    names = t.decode_iris(<const unsigned char *>ids, len(todo), 8, False)
    if top >= len(flags):
        (<object>flags).extend(bytes(top + 1 - len(flags) + 1024))   # (a plain call: Cython 3.3
        # inlines a typed bytearray's extend with macros this module does not get)
    for i in range(len(todo)):
        if names[i] is not None:
            flags[todo[i][1]] = 1 if names[i].startswith(graph_prefix) else 2
    return 0


cdef list lit_graphs(itxn, StoreEnv store, uint64_t oid):
    """The numbers of the graphs that hold literal / blank node ``oid`` as an
    object (``lit``: a range in each epoch)."""
    cdef bytes obj = be(oid), v
    cdef bytes probe = obj + bytes(LIT_VAL_SIZE - 8)   # the first row for oid
    cdef list out = []
    cur = itxn.cursor(db=store.idb_lit)
    epoch = cur.first()
    while epoch:
        ep = cur.key()
        found = cur.set_range_dup(ep, probe)
        while found:
            v = cur.value()
            if len(v) != LIT_VAL_SIZE:
                raise StoreError("Corrupt index: a lit row is truncated")
            if v[:8] != obj:
                break
            out.append(get_be32(<const unsigned char *>PyBytes_AS_STRING(v) + 8))
            found = cur.next_dup()
        cur.set_key(ep)
        epoch = cur.next_nodup()
    return out
