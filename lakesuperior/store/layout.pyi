"""Codecs of the quad store's byte layout: C-level only (see ``layout.pxd``)."""
