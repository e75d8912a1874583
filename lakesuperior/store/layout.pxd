# The byte layout of the quad store's LMDB tables: structs and codec signatures.
#
# Logic-free: the codecs are implemented in layout.pyx. Ids in keys and in
# dupsort values are big-endian u64 (LMDB compares them as bytes, so byte order
# is numeric order). A packed row below is what one ``getmulti(keyfixed=True)``
# item holds: the key's bytes, then one fixed-size duplicate value.
from libc.stdint cimport uint64_t

cdef enum:
    ID_SIZE = 8
    ROW_SIZE = 32            # a pos / osp / gx row: four ids
    SG_ROW_SIZE = 16         # an sg row: two ids
    TRIPLE_SIZE = 24         # a logged (s, p, o) triple
    LOG_REPLACE = 1          # log entry: a whole graph was set (read its content)
    LOG_DELTA = 2            # log entry: single quads were added / removed

# gx: key (g, s, p), values o (dupsort, dupfixed 8 B): IRI-only quads.
cdef struct GxRow:
    unsigned char g[8]
    unsigned char s[8]
    unsigned char p[8]
    unsigned char o[8]

# pos: key p, values (o, s, g) (dupfixed 24 B).
cdef struct PosRow:
    unsigned char p[8]
    unsigned char o[8]
    unsigned char s[8]
    unsigned char g[8]

# osp: key o, values (s, p, g) (dupfixed 24 B).
cdef struct OspRow:
    unsigned char o[8]
    unsigned char s[8]
    unsigned char p[8]
    unsigned char g[8]

# sg: key s, values g (dupfixed 8 B): the graphs where s is a subject.
cdef struct SgRow:
    unsigned char s[8]
    unsigned char g[8]

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
cdef bytes be(uint64_t v)
cdef bytes be_n(uint64_t a, uint64_t b, uint64_t c, int n)
cdef uint64_t id_at(bytes data, Py_ssize_t pos) except? 0
cdef bytes pack_triples(list triples)
cdef list unpack_triples(bytes data, Py_ssize_t start, Py_ssize_t n)
