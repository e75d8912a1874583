"""Reading the union index's rows: graph numbers, ``lit``, sorted pair sets."""

MAX_PREFIXES: int
