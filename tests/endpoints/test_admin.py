"""Admin pages: /admin/stats (JSON and HTML) and /admin/fixity/<uid>."""
import os


def test_stats_json_matches_the_cli_figures(client, repo):
    repo.create_or_replace("/a", data=b"<> <http://purl.org/dc/terms/title> 'A' .",
                           media_type="text/turtle")
    r = client.get("/admin/stats", headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.mimetype == "application/json"
    from lakesuperior.admin.stats import repository_stats
    expected = repository_stats(repo)
    assert r.get_json()["by_model"] == expected["by_model"]
    assert r.get_json()["by_model"]["ldp:BasicContainer"] >= 2   # root and /a


def test_stats_html_and_406(client):
    r = client.get("/admin/stats", headers={"Accept": "text/html"})
    assert r.status_code == 200 and r.mimetype == "text/html"
    assert b"Repository statistics" in r.data and b"by_model" in r.data
    r = client.get("/admin/stats", headers={"Accept": "image/png"})
    assert r.status_code == 406
    assert b"application/json" in r.data


def test_fixity_of_a_binary(client, repo):
    repo.create_or_replace("/bin", stream=b"hello fixity", media_type="text/plain")
    r = client.get("/admin/fixity/bin")
    assert r.status_code == 200
    body = r.get_json()
    assert body["ok"] is True and body["uid"] == "/bin" and body["size"] == 12
    # Corrupt the stored file: the check says so.
    path = repo.binaries.path(body["expected"])
    os.chmod(path, 0o600)
    with open(path, "wb") as fh:
        fh.write(b"tampered")
    body = client.get("/admin/fixity/bin").get_json()
    assert body["ok"] is False


def test_fixity_of_unknown_resource_is_404(client):
    r = client.get("/admin/fixity/nope")
    assert r.status_code == 404
    assert b"nope" in r.data


def test_admin_pages_show_nothing_of_the_host_file_system(client, repo):
    """Neither the data directory nor any other host path, in JSON or HTML."""
    repo.create_or_replace("/bin", data=b"content", media_type="text/plain")
    data_dir = os.path.abspath(repo.config.data_dir)
    parent = os.path.dirname(data_dir)
    for accept in ("application/json", "text/html"):
        r = client.get("/admin/stats", headers={"Accept": accept})
        assert r.status_code == 200
        text = r.get_data(as_text=True)
        assert parent not in text and "data_dir" not in text
        assert "resources" in text                    # the figures are still there
    path = repo.binaries.path(client.get("/admin/fixity/bin").get_json()["expected"])
    os.chmod(path, 0o600)
    os.unlink(path)
    r = client.get("/admin/fixity/bin")
    assert r.status_code == 200 and r.get_json()["ok"] is False
    assert parent not in r.get_data(as_text=True)
