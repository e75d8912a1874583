"""``lsup-admin binaries move``: a repository's content from files to S3 (SeaweedFS)
and back, verified by digest, resumable, reads served from the old backend
meanwhile, the source removed only once the configuration names the new one."""
from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner

from lakesuperior.admin.moving import move_binaries
from lakesuperior.exceptions import AdminError
from tests.binaries import cli_env, corrupt, remove

pytestmark = pytest.mark.slow

CONTENTS = [b"first", b"second" * 1000, b""]


def _fill(repo) -> list[str]:
    repo.create_or_replace("/c")
    for i, data in enumerate(CONTENTS):
        repo.create_or_replace(f"/c/b{i}", data=data, media_type="application/octet-stream")
    return [hashlib.sha512(d).hexdigest() for d in CONTENTS]


def _read(repo, uid: str) -> bytes:
    with repo.get(uid).content as f:
        return f.read()


@pytest.fixture
def s3_repo(repo_factory, seaweedfs):
    """A repository on files whose configuration also names an S3 bucket and prefix."""
    import uuid
    keywords = seaweedfs.config(prefix=f"t{uuid.uuid4().hex[:16]}/")
    keywords["binaries_backend"] = "file"
    return repo_factory(**keywords)


def test_move_to_s3_and_back(s3_repo, repo_factory):
    repo = s3_repo
    digests = _fill(repo)
    report = move_binaries(repo, "s3")
    assert (report.copied, report.present, report.ok) == (3, 0, True)
    assert report.copied_bytes == sum(map(len, CONTENTS))
    assert _read(repo, "/c/b1") == CONTENTS[1]                # still read from the files
    again = move_binaries(repo, "s3")                         # resumable: nothing to do
    assert (again.copied, again.present) == (0, 3)
    with pytest.raises(AdminError, match="before removing the source"):
        move_binaries(repo, "s3", remove_source=True)
    repo.close()
    moved = repo_factory("repo", **dict(_s3(repo), binaries_backend="s3"))
    assert sorted(moved.binaries) == sorted(digests)
    assert [_read(moved, f"/c/b{i}") for i in range(3)] == CONTENTS
    assert all(moved.fixity_check(f"/c/b{i}").ok for i in range(3))
    moved.create_or_replace("/c/late", data=b"written after the switch")
    done = move_binaries(moved, "s3", remove_source=True)      # the files go
    assert done.removed == 3 and done.present == 4          # /c/late: written to S3
    back = move_binaries(moved, "file")
    assert back.copied == 4 and back.ok


def _s3(repo) -> dict:
    cfg = repo.config
    return {k: getattr(cfg, k) for k in ("binaries_s3_endpoint", "binaries_s3_bucket",
                                         "binaries_s3_region", "binaries_s3_prefix",
                                         "binaries_s3_access_key_id",
                                         "binaries_s3_secret_access_key")}


def test_move_reports_missing_and_corrupt_content_and_keeps_neither(s3_repo):
    repo = s3_repo
    digests = _fill(repo)
    corrupt(repo.binaries, digests[0])
    remove(repo.binaries, digests[1])
    report = move_binaries(repo, "s3")
    assert report.corrupt == [digests[0]] and report.missing == [digests[1]]
    assert report.copied == 1 and not report.ok
    repo.close()
    code = CliRunner().invoke(_cli(), ["binaries", "move", "--to", "s3", "--data-dir",
                                       repo.config.data_dir], env=_env(repo))
    assert code.exit_code == 1, code.output
    assert f"CORRUPT {digests[0]}" in code.output and f"MISSING {digests[1]}" in code.output


def test_move_cli(s3_repo):
    _fill(s3_repo)
    s3_repo.close()
    r = CliRunner().invoke(_cli(), ["binaries", "move", "--to", "s3", "--data-dir",
                                    s3_repo.config.data_dir], env=_env(s3_repo))
    assert r.exit_code == 0, r.output
    assert "Copied 3 binaries" in r.output and "0 were there already" in r.output


def _cli():
    from lakesuperior.cli import cli
    return cli


def _env(repo) -> dict:
    class Shown:                    # cli_env of the S3 settings, the backend kept
        config = repo.config.with_(binaries_backend="s3")
    return {**cli_env(Shown), "LSUP_BINARIES_BACKEND": "file", "LSUP_CONFIG": None,
            "LSUP_DATA_DIR": None}
