# C-level contract of the access-path choice (see access.pyx).

cdef enum Path:
    PATH_GRAPH = 1         # g bound, s free: the graph's record and gx, filtered
    PATH_GRAPH_S = 2       # g, s bound: the subject's range in record and gx
    PATH_GRAPH_SP = 3      # g, s, p bound, o free: the gx (g, s, p) run + record range
    PATH_ALL = 4           # nothing bound: every graph
    PATH_SG = 5            # s bound, o and g free: sg gives the graphs, then PATH_GRAPH_S
    PATH_OSP = 6           # o bound, g free: osp
    PATH_POS = 7           # p bound, s, o and g free: pos
    PATH_COUNT_OSP = 8     # counting, o bound, g free, IRIs only: osp, nothing decoded
    PATH_COUNT_POS = 9     # counting, p bound, o and g free, IRIs only: pos, ditto

cdef Path access_path(bint s, bint p, bint o, bint g, bint iris, bint counting,
                      bint touched) noexcept nogil
