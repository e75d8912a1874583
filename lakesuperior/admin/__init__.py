"""Archivists' operations on a repository: statistics and checks, backup and restore,
migration from another LDP server, and the HTTP client migration uses."""
