"""Utilities that sit beside the API: the benchmark workload and the benchmark."""
