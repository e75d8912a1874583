"""Build the Cython extensions of the quad store.

One ``Extension`` per module, compiler directives in one place.
"""
from Cython.Build import cythonize
from setuptools import Extension, setup

MODULES = [
    "lakesuperior.store.terms",
    "lakesuperior.store.records",
    "lakesuperior.store.quadstore",
]

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "embedsignature": True,
}

extensions = [
    Extension(name, [name.replace(".", "/") + ".pyx"], extra_compile_args=["-O2"])
    for name in MODULES
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))
