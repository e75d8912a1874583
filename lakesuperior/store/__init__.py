"""The storage engine: quads and bytes; knows nothing of LDP."""
