# The byte layout of the quad store's LMDB tables: structs and codec signatures.
#
# Logic-free: the codecs are implemented in layout.pyx. Ids in keys and in
# dupsort values are big-endian u64 (LMDB compares them as bytes, so byte order
# is numeric order). A packed row below is what one ``getmulti(keyfixed=True)``
# item holds: the key's bytes, then one fixed-size duplicate value.
from libc.stdint cimport uint32_t, uint64_t

cdef enum:
    ID_SIZE = 8
    TERM_KEY_SIZE = 9        # rec: an IRI's key, its id then TERM_KEY_TAG
    TERM_KEY_TAG = 0x69      # b"i"
    ROW_SIZE = 32            # a gx row: four ids
    GNUM_SIZE = 4            # a graph number of the index (``gn`` / ``ng``)
    IDX_ROW_SIZE = 28        # a pos / osp row: key id + (graph number, id, id)
    IDX_VAL_SIZE = 20        # its value (dupfixed)
    SG_ROW_SIZE = 12         # an sg row: s + graph number
    LIT_ROW_SIZE = 16        # a lit row: epoch + (o, graph number)
    LIT_VAL_SIZE = 12        # its value (dupfixed)
    EPOCH_SHIFT = 12         # a lit epoch: 4096 consecutive graph numbers
    TRIPLE_SIZE = 24         # a logged (s, p, o) triple
    LOG_REPLACE = 1          # log entry: a whole graph was set (read its content)
    LOG_DELTA = 2            # log entry: single quads were added / removed

# rec: key g (8 B) -> the graph's record (records.pyx); key (id, TERM_KEY_TAG) (9 B)
# -> an IRI's canonical UTF-8 (the IRI dictionary, format 4). A graph's name sorts
# right after its record: writing a new resource puts both in one leaf.
cdef bytes term_key(uint64_t v)

# gx: key (g, s, p), values o (dupsort, dupfixed 8 B): IRI-only quads.
cdef struct GxRow:
    unsigned char g[8]
    unsigned char s[8]
    unsigned char p[8]
    unsigned char o[8]

# The index's rows name a graph by its *graph number* (u32, big-endian), given
# by the indexer in the order it first meets graphs (``gn``: id -> number,
# ``ng``: number -> id). Values start with it, so the rows of new graphs go at
# the end of each key's run (appended: full pages, few pages touched).

# pos: key p, values (g#, o, s) (dupfixed 20 B).
cdef struct PosRow:
    unsigned char p[8]
    unsigned char g[4]
    unsigned char o[8]
    unsigned char s[8]

# osp: key o (an IRI), values (g#, s, p) (dupfixed 20 B).
cdef struct OspRow:
    unsigned char o[8]
    unsigned char g[4]
    unsigned char s[8]
    unsigned char p[8]

# lit: key epoch (u32: g# >> EPOCH_SHIFT), values (o, g#) (dupfixed 12 B): which
# graphs hold a literal or blank node as an object (osp has the IRI objects). Such
# objects are mostly distinct, so a key each (as in osp) would cost a node each;
# here they are packed rows, and the graph's record gives the triples. New rows
# land in the last epoch, so a batch rewrites the pages of one epoch, not of the
# whole table; a lookup of an object probes each epoch (a range in each).
cdef struct LitRow:
    unsigned char epoch[4]
    unsigned char o[8]
    unsigned char g[4]

# sg: key s, values g# (dupfixed 4 B): the graphs where s is a subject.
cdef struct SgRow:
    unsigned char s[8]
    unsigned char g[4]

# A change-log entry's removed and added triples.
cdef struct TripleRow:
    unsigned char s[8]
    unsigned char p[8]
    unsigned char o[8]

# index ``state`` value ``rebuild``: (log seq to reach, last graph id indexed).
cdef struct RebuildState:
    unsigned char upto[8]
    unsigned char after[8]

# In-memory (native-endian) id triple, as the graph records hold them.
cdef struct IdTriple:
    uint64_t s
    uint64_t p
    uint64_t o

cdef void put_be(unsigned char *buf, uint64_t v) noexcept nogil
cdef uint64_t get_be(const unsigned char *buf) noexcept nogil
cdef void put_be32(unsigned char *buf, uint32_t v) noexcept nogil
cdef uint32_t get_be32(const unsigned char *buf) noexcept nogil
cdef bytes be32(uint32_t v)
cdef bytes be(uint64_t v)
cdef bytes be_n(uint64_t a, uint64_t b, uint64_t c, int n)
cdef uint64_t id_at(bytes data, Py_ssize_t pos) except? 0
cdef bytes pack_triples(list triples)
cdef list unpack_triples(bytes data, Py_ssize_t start, Py_ssize_t n)
