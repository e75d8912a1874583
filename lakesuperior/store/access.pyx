"""The access path for a quad pattern: which table a match, count or remove reads."""


cdef Path access_path(bint s, bint p, bint o, bint g, bint iris, bint counting,
                      bint touched) noexcept nogil:
    """The one choice of access path for a pattern; ``match``, ``count`` and
    ``remove`` (which removes what ``match`` finds) all ask here.

    ``s``, ``p``, ``o``, ``g``: which positions are bound. ``iris``: every bound
    subject and object is an IRI. ``counting``: the caller only counts.
    ``touched``: the transaction changed graphs the union indices do not hold yet.

    ============  ========================  ======================================
    g bound       s free                    PATH_GRAPH: record + gx, filtered
                  s bound, p free or o bound PATH_GRAPH_S: the subject's ranges
                  s, p bound, o free        PATH_GRAPH_SP: gx (g, s, p) run (a
                                            containment listing; O(1) to count)
    g free        nothing bound             PATH_ALL: every graph
                  counting, p or o bound,   PATH_COUNT_OSP if o bound, else
                  only IRIs, not touched    PATH_COUNT_POS: nothing decoded
                  s bound, o free           PATH_SG: the graphs of s (sg)
                  o bound                   PATH_OSP
                  p bound                   PATH_POS
    ============  ========================  ======================================
    """
    if g:
        if not s:
            return PATH_GRAPH
        if p and not o:
            return PATH_GRAPH_SP
        return PATH_GRAPH_S
    if not (s or p or o):
        return PATH_ALL
    if counting and (p or o) and iris and not touched:
        return PATH_COUNT_OSP if o else PATH_COUNT_POS
    if s and not o:
        return PATH_SG
    if o:
        return PATH_OSP
    return PATH_POS
