#!/usr/bin/env python3
"""The WORKLOAD.md benchmark (also installed as ``lsup-benchmark``).

    python util/benchmark.py --count 10000 --output bench.json --plot bench.png
    python util/benchmark.py --mode http --endpoint http://127.0.0.1:8000/rest/

The implementation is ``lakesuperior.bench.benchmark``; run ``--help`` for the options.
"""
import sys

from lakesuperior.bench.benchmark import main

if __name__ == "__main__":
    sys.exit(main())
