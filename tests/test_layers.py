"""The house rules of docs/architecture.md, checked on the source tree.

Every import of a ``lakesuperior`` module counts: at module level, inside a
function, under ``TYPE_CHECKING``, and ``cimport`` in Cython files. A module may
import from its own layer and the layers below it; the package has no import
cycle; no source file is over 700 lines; imports inside functions are the few
listed below, each with its reason.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lakesuperior"
MAX_LINES = 700

# Lowest first. A module belongs to the first entry that is its name or a prefix of it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("lakesuperior.exceptions", "lakesuperior.version"),
    ("lakesuperior.config", "lakesuperior.http"),
    ("lakesuperior.store.terms", "lakesuperior.store.records", "lakesuperior.store.binaries",
     "lakesuperior.store.pipeline", "lakesuperior.store.external", "lakesuperior.store.private"),
    ("lakesuperior.store",),              # the quad store core, above its codecs
    ("lakesuperior.rdfio", "lakesuperior.jsonld", "lakesuperior.rdf"),
    ("lakesuperior.store.rdflib_store",),  # the rdflib adapter: store + rdfio
    ("lakesuperior.model",),
    ("lakesuperior.query",),
    ("lakesuperior.auth",),                # users, agents, WebAC: above the model it guards
    ("lakesuperior.repository",),
    ("lakesuperior.admin", "lakesuperior.messaging", "lakesuperior.replicas",
     "lakesuperior.ocfl"),
    ("lakesuperior.bench",),
    ("lakesuperior.endpoints",),
    ("lakesuperior.cli", "lakesuperior.server", "lakesuperior"),
)

# (importer, imported) pairs allowed inside a function, and why.
FUNCTION_IMPORTS = {
    ("lakesuperior", "lakesuperior.repository"):
        "`import lakesuperior` must not load the compiled store",
    ("lakesuperior.server", "lakesuperior.endpoints.app"):
        "each gunicorn worker builds its app (and opens the store) after fork",
}

_CYTHON_IMPORT = re.compile(
    r"^\s*(?:from\s+(lakesuperior[\w.]*)\s+c?import\b|c?import\s+(lakesuperior[\w.]*))",
    re.MULTILINE)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> list[Path]:
    return sorted(p for ext in ("*.py", "*.pyx", "*.pxd")
                  for p in PACKAGE.rglob(ext) if "build" not in p.parts)


def _modules() -> set[str]:
    return {_module_name(p) for p in _sources()}


def _resolve(name: str, modules: set[str]) -> str | None:
    """The package module an imported dotted name refers to (longest known prefix)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(path: Path, modules: set[str]) -> list[tuple[str, bool]]:
    """(imported module, inside a function) for every lakesuperior import of a file."""
    text = path.read_text(encoding="utf-8")
    found: list[tuple[str, bool]] = []
    if path.suffix != ".py":
        for m in _CYTHON_IMPORT.finditer(text):
            name = m.group(1) or m.group(2)
            target = _resolve(name, modules)
            if target:
                found.append((target, False))
        return found
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(node):
                inner._in_function = True  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        in_function = getattr(node, "_in_function", False)
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name.startswith("lakesuperior"):
                target = _resolve(name, modules)
                if target:
                    found.append((target, in_function))
    return found


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for i, names in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    assert best >= 0, f"{module} is in no layer of tests/test_layers.py"
    return best


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path in _sources():
        me = _module_name(path)
        graph[me].update(t for t, _ in _imports(path, modules) if t != me)
    return graph


def test_every_module_has_a_layer():
    for module in _modules():
        _layer(module)


def test_imports_go_down_the_layers():
    wrong = []
    for importer, targets in _graph().items():
        for target in targets:
            if _layer(target) > _layer(importer):
                wrong.append(f"{importer} imports {target}")
    assert not wrong, "imports that go up the layers:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:      # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_imports_inside_functions_are_the_listed_ones():
    modules = _modules()
    hidden = sorted({(_module_name(p), t) for p in _sources() for t, inside in
                     _imports(p, modules) if inside} - set(FUNCTION_IMPORTS))
    assert not hidden, "imports inside functions (move them to the top):\n" + "\n".join(
        f"{a} -> {b}" for a, b in hidden)


@pytest.mark.parametrize("path", _sources() + [p for p in PACKAGE.rglob("*.pyi")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_source_file_over_the_limit(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)}: {lines} lines (limit {MAX_LINES})"


def test_the_checker_sees_a_cycle_and_an_upward_import(tmp_path):
    """The checks above can fail: a fake two-module cycle and an upward import."""
    pkg = tmp_path / "lakesuperior"
    (pkg / "store").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "exceptions.py").write_text("def f():\n    from lakesuperior.store import x\n")
    (pkg / "store" / "__init__.py").write_text("")
    (pkg / "store" / "x.pyx").write_text("from lakesuperior.exceptions cimport E\n")
    global ROOT, PACKAGE
    saved = ROOT, PACKAGE
    ROOT, PACKAGE = tmp_path, pkg
    try:
        with pytest.raises(AssertionError, match="up the layers"):
            test_imports_go_down_the_layers()
        with pytest.raises(AssertionError, match="import cycles"):
            test_no_import_cycle()
        with pytest.raises(AssertionError, match="inside functions"):
            test_imports_inside_functions_are_the_listed_ones()
    finally:
        ROOT, PACKAGE = saved


def test_model_docstring_lists_every_module_in_layer_order():
    """``model/__init__.py`` lists every module of ``model/``, lowest first: each
    imports only modules listed before it."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "model" / "__init__.py").read_text())) or ""
    listed = re.findall(r"^\* ``(\w+)``:", doc, re.MULTILINE)
    folder = sorted(p.stem for p in (PACKAGE / "model").glob("*.py") if p.stem != "__init__")
    assert sorted(listed) == folder
    modules = _modules()
    for i, name in enumerate(listed):
        path = PACKAGE / "model" / f"{name}.py"
        for target, _ in _imports(path, modules):
            if target.startswith("lakesuperior.model."):
                assert target.rsplit(".", 1)[1] in listed[:i], (name, target)


def test_every_transaction_is_typed():
    """A read takes a ``Reader`` (or a ``Context``), a write a ``WriteTxn`` (or a
    ``WriteContext``): mypy then refuses a write on a read snapshot. ``Any``
    would let one through."""
    found = [f"{p.relative_to(ROOT)}:{i}" for p in _sources() if p.suffix == ".py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\btxn: Any\b", line)]
    assert found == []


def test_the_triple_type_has_one_owner():
    """``Triple`` is defined once, beside ``Term`` and ``Quad`` in the store's
    reads (its ``.pyi`` mirrors it); everything else imports it."""
    owners = [str(p.relative_to(ROOT)) for p in _sources()
              if re.search(r"^Triple\s*=", p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert owners == ["lakesuperior/store/reads.pyx"]


def test_term_escapes_have_one_owner():
    """``store/terms`` escapes and unescapes term strings; no Python module does
    it again (a copy of ``\\uXXXX`` handling is a second owner)."""
    copies = [str(p.relative_to(ROOT)) for p in _sources() if p.suffix == ".py"
              and re.search(r"chr\(int\(", p.read_text(encoding="utf-8"))]
    assert copies == []


def test_digest_names_have_one_owner():
    """The digest algorithms and their names (hashlib, HTTP, URN) are listed once,
    in ``http/digests.py``; a second list of them is a second owner."""
    listing = re.compile(r"""["']sha-?512["'][^\n]*["']sha-?256["']""")
    owners = [str(p.relative_to(ROOT)) for p in _sources()
              if listing.search(p.read_text(encoding="utf-8"))]
    assert owners == ["lakesuperior/http/digests.py"]


def test_benchmarks_do_not_import_the_tests():
    """A benchmark runs from an installed package, without the test suite."""
    found = [str(p.relative_to(ROOT)) for folder in ("benchmarks", "util")
             for p in sorted((ROOT / folder).rglob("*.py"))
             if re.search(r"^\s*(?:from|import) tests\b", p.read_text(encoding="utf-8"),
                          re.MULTILINE)]
    assert found == []


def test_only_the_repository_reaches_its_store():
    """Outside ``repository/``, code asks ``Repository`` (``snapshot``, ``index``,
    ``index_pending``, ``index_state``, ``make_durable``, ``copy_store``), never
    its ``store`` directly."""
    reach = re.compile(r"\b(?:repo|repository|copy|self\.repo|self\._repo)\.store\b")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in _sources() if p.suffix == ".py"
             and "repository" not in p.relative_to(PACKAGE).parts
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if reach.search(line)]
    assert found == []


def test_the_repository_class_grows_by_files_not_base_classes():
    """``Repository`` has no base class: its method groups are functions of their
    own modules, bound in its class body, each one of a ``repository`` module."""
    from lakesuperior.repository import Repository
    assert Repository.__bases__ == (object,)
    bound = {name: fn.__module__ for name, fn in vars(Repository).items()
             if callable(fn) and getattr(fn, "__module__", "") != Repository.__module__}
    assert bound and all(m.startswith("lakesuperior.repository.") for m in bound.values())
    assert {"acl", "as_agent", "changes", "stats"} <= set(bound)
