"""The access path for a quad pattern: C-level only (see ``access.pxd``)."""
