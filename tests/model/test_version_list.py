"""``versions.VersionList``: a resource's version ids and labels, read in one
snapshot, each ``VersionInfo`` made only when asked for."""
from __future__ import annotations

import pytest

from lakesuperior.model.uids import UriMap
from lakesuperior.model.versions import VersionInfo, VersionList, no_versions

BASE = "http://test.example/rest"
IDS = ["20240101000000", "20240102030405", "20250607080910"]


def test_entries_are_made_when_asked_for_and_kept():
    versions = VersionList(UriMap(BASE), "/r", list(IDS), {IDS[1]: "second"})
    assert len(versions) == 3 and versions.ids == IDS
    assert versions._made == [None, None, None]       # nothing made by reading the ids
    last = versions[-1]
    assert isinstance(last, VersionInfo) and versions._made[:2] == [None, None]
    assert last == VersionInfo(IDS[2], "/r", f"{BASE}/r/fcr:versions/{IDS[2]}",
                               '"2025-06-07T08:09:10.000000Z"^^<http://www.w3.org/2001/XMLSchema'
                               '#dateTime>', None)
    assert versions[2] is last                        # made once
    assert versions[1].label == "second" and versions[0].label is None
    assert [v.id for v in versions] == IDS and versions[0:2] == [versions[0], versions[1]]
    assert list(reversed(versions))[0] is last and versions.index(last) == 2
    with pytest.raises(IndexError):
        versions[3]


def test_no_versions():
    empty = no_versions("/r")
    assert len(empty) == 0 and not empty and list(empty) == [] and empty.ids == []
    with pytest.raises(IndexError):
        empty[-1]
