"""The benchmark front door (``lsup-benchmark``, ``util/benchmark.py``) and its workload."""
