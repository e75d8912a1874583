# C-level contract of the store environment: the two LMDB environments, their
# tables, the format, map growth and the open-transaction account.
from libc.stdint cimport uint64_t

cdef class StoreEnv:
    cdef readonly str path
    cdef readonly bint sync
    cdef readonly bint readonly
    cdef readonly Py_ssize_t index_batch
    cdef readonly int hash_bits
    cdef readonly object durability   # DurabilityGate (None: sync off, or read-only)
    cdef object env, ienv
    cdef object db_meta, db_collide, db_rec, db_gx, db_log, db_ns, db_nsr
    cdef object db_outbox
    cdef object idb_state, idb_pos, idb_osp, idb_sg, idb_lit, idb_gn, idb_ng
    cdef bint index_usable    # False: a read-only open of an index of another format
    cdef bytes prefix_gen     # the index generation (``state.gen``) prefix_ok is for
    cdef dict prefix_ok       # graph prefix -> bytearray by graph number: 0 unknown, 1 yes, 2 no
    cdef int pid
    cdef dict iri_ids     # canonical IRI -> id, for committed IRIs only
    cdef dict iri_strs    # id -> canonical IRI
    cdef readonly Py_ssize_t iri_cache   # most IRIs the two dicts above hold
    cdef Py_ssize_t open_txns
    cdef Py_ssize_t ahead_end   # the main data file is known written up to here
    cdef Py_ssize_t page_size
    cdef readonly object map_trimmer   # residency.MapTrimmer: the bound on resident map pages
    cdef Py_ssize_t map_steps          # reads since the trimmer last looked (``mapped``)
    cdef bint closed
    cdef uint64_t hash_mask

    cdef _open_dbs(self)
    cdef object _open_outbox(self, env, dict opts)
    cdef _check_format(self, hash_bits)
    cdef int _upgrade_records(self, txn) except -1
    cdef int _move_terms(self, txn) except -1
    cdef int check_open(self) except -1
    cdef object begin(self, env, bint write)
    cdef int ensure_room(self) except -1
    cdef int grow(self, env, Py_ssize_t need) except -1
    cdef int write_ahead(self) except -1
    cdef int check_no_txns(self, str what) except -1
    cdef object write_failure(self, e, Py_ssize_t need)
    cdef int remember(self, dict iris) except -1
    cdef int mapped(self, Py_ssize_t steps) except -1

cdef uint64_t last_seq(txn, db) except? 0
cdef uint64_t applied_seq(itxn, db) except? 0
cdef uint64_t committed_seq(StoreEnv store) except? 0
