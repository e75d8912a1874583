"""SPARQL and pattern queries over a read snapshot of the repository."""
