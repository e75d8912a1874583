"""RDF languages the repository reads, beyond the documents of ``rdfio``.

``sparql_parser``   rdflib's SPARQL 1.1 parser, made safe to call from any thread
"""
