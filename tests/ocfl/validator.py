"""The independent check of every export: ocfl-py's validator (PyPI ``ocfl-py``),
with the 0004 hashed n-tuple layout (which ocfl-py does not ship) registered
for it, written here from the extension's text, not from our exporter."""
from __future__ import annotations

import hashlib

from ocfl import layout_registry
from ocfl.layout import Layout, LayoutException
from ocfl.storage_root import StorageRoot

NAME = "0004-hashed-n-tuple-storage-layout"


class Layout0004(Layout):
    """OCFL Community Extension 0004: Hashed N-tuple Storage Layout."""

    def __init__(self) -> None:
        super().__init__()
        self.NAME = NAME
        self.DESCRIPTION = "Extension 0004: Hashed N-tuple Storage Layout"
        self.digest_algorithm = "sha256"
        self.tuple_size = 3
        self.number_of_tuples = 3
        self.short_object_root = False
        self.PARAMS = {"digestAlgorithm": self._set("digest_algorithm", "sha256"),
                       "tupleSize": self._set("tuple_size", 3),
                       "numberOfTuples": self._set("number_of_tuples", 3),
                       "shortObjectRoot": self._set("short_object_root", False)}

    def _set(self, attr, default):
        def setter(value):
            setattr(self, attr, default if value is None else value)
        return setter

    @property
    def config(self):
        return {"extensionName": NAME, "digestAlgorithm": self.digest_algorithm,
                "tupleSize": self.tuple_size, "numberOfTuples": self.number_of_tuples,
                "shortObjectRoot": self.short_object_root}

    def check_full_config(self):
        if self.tuple_size * self.number_of_tuples > len(
                hashlib.new(self.digest_algorithm).hexdigest()):
            raise LayoutException("tupleSize * numberOfTuples longer than the digest")

    def identifier_to_path(self, identifier):
        h = hashlib.new(self.digest_algorithm, identifier.encode("utf-8")).hexdigest()
        n, t = self.number_of_tuples, self.tuple_size
        parts = [h[i * t:(i + 1) * t] for i in range(n)]
        return "/".join(parts + [h[n * t:] if self.short_object_root else h])


layout_registry.add_layout(NAME, Layout0004)


def _registered(message: str) -> bool:
    """ocfl-py 2.1 warns (W013) of every object extension, registered ones too: it
    compares the directory's path (``extensions/0005-mutable-head``) with the
    registered names. Such a warning for a registered extension is no problem."""
    return "[W013]" in message and "'extensions/0005-mutable-head'" in message


def validate_root(path: str) -> list[str]:
    """Every problem ocfl-py finds in the storage root at ``path`` (digests checked,
    warnings included), plus any object not where the 0004 layout puts it."""
    root = StorageRoot(root=path)
    root.registered_extensions = [*root.registered_extensions, NAME]
    problems: list[str] = []
    if not root.validate(check_digests=True, log_warnings=True):
        problems.append(f"storage root invalid: {root.log}")
    for d, messages in root.errors:
        problems += [f"{d}: {m}" for m in messages.split("\n") if not _registered(m)]
    layout = Layout0004()
    for dirpath, identifier in root.list_objects():
        if layout.identifier_to_path(identifier) != dirpath:
            problems.append(f"{identifier} is at {dirpath}, not where 0004 puts it")
    assert root.num_objects == root.good_objects, problems
    return problems


def assert_valid(path: str, allowed: tuple[str, ...] = ()) -> None:
    """ocfl-py finds nothing wrong with the root at ``path``, not even a warning
    (but the ``allowed`` codes: W004, sha256 chosen over the sha512 OCFL prefers)."""
    problems = [p for p in validate_root(path) if not any(f"[{c}]" in p for c in allowed)]
    assert problems == [], "\n".join(problems)
