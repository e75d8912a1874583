"""Every ```python block of docs/python-api.md runs, in order, in one namespace,
in a fresh temporary directory."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_guide_has_examples():
    assert len(blocks()) >= 10


def test_python_api_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for var in ("LSUP_CONFIG", "LSUP_DATA_DIR", "LSUP_BASE_URI", "LSUP_SYNC"):
        monkeypatch.delenv(var, raising=False)
    namespace: dict = {"__name__": "docs_example"}
    for n, code in enumerate(blocks(), 1):
        try:
            exec(compile(code, f"{DOC.name}[block {n}]", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the message is the point
            pytest.fail(f"block {n} of {DOC.name} failed: {e!r}\n{code}")
    assert (tmp_path / "my-repo" / "ldprs" / "data.mdb").exists()
    assert "rolled back:" in capsys.readouterr().out
