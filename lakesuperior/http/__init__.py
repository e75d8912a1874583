"""HTTP as the server and the admin's client both speak it: pure functions and a client.

``grammar``      the token grammar of RFC 9110: lists, parameters, quoted strings, q-values
``mediatypes``   media types, media ranges and ``Accept`` negotiation
``headers``      the header fields the repository reads and writes (Prefer, Link,
                 ETag, Digest, Range, dates, ...)
``client``       the HTTP client of ``lsup-admin migrate`` and the benchmarks

Each name has one import path: the module that defines it.
"""
