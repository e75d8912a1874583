"""RDF languages the repository reads, beyond the documents of ``rdfio``.

``sparql_parser``   rdflib's SPARQL 1.1 parser, made safe to call from any thread
``regex``           SPARQL's REGEX and REPLACE on RE2: linear time, a budget per match
``turtle``          Turtle written straight from canonical N-Triples terms (no parse)
"""
