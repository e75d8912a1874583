"""Build the Cython extensions: the quad store's, and the OCFL export's batched
file writes.

One ``Extension`` per module, compiler directives in one place. Bounds and
wraparound checks stay on; a proven-in-range hot loop turns them off itself
(``@cython.boundscheck(False)`` / ``@cython.wraparound(False)``).
"""
from Cython.Build import cythonize
from setuptools import Extension, setup

MODULES = [
    "lakesuperior.store.terms",
    "lakesuperior.store.records",
    "lakesuperior.store.layout",
    "lakesuperior.store.env",
    "lakesuperior.store.txn",
    "lakesuperior.store.access",
    "lakesuperior.store.unionrows",
    "lakesuperior.store.indexer",
    "lakesuperior.store.reads",
    "lakesuperior.store.journal",
    "lakesuperior.store.writes",
    "lakesuperior.store.quadstore",
    "lakesuperior.ocfl.fswrite",
]

DIRECTIVES = {
    "language_level": 3,
    "cdivision": True,
    "embedsignature": True,
}

extensions = [
    Extension(name, [name.replace(".", "/") + ".pyx"], extra_compile_args=["-O2"])
    for name in MODULES
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))
