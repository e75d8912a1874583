"""The package version (kept apart so the build can read it without importing)."""
__version__ = "1.0.0a1"
