"""``GET /health`` (200 when the store reads and the indexer keeps up, 503 with a
reason that names no path otherwise) and ``GET /metrics`` (Prometheus text, for
administrators and the addresses of ``metrics.allowed``: 401 / 403 for others),
counted in the app's own registry."""
from __future__ import annotations

import base64
import json
import re

import pytest

from lakesuperior.endpoints import authn, operations
from tests.auth.conftest import CHEAP_HASHER, user_file, write_users
from tests.endpoints.conftest import TTL

USERS = {"alice": ("alice-pw", False), "root": ("root-pw", True)}


@pytest.fixture(scope="module")
def users_file(tmp_path_factory) -> bytes:
    return user_file(tmp_path_factory.mktemp("users"),
                     [(n, p) for n, (p, admin) in USERS.items() if not admin],
                     [(n, p) for n, (p, admin) in USERS.items() if admin])


@pytest.fixture
def secured(make_app, tmp_path, users_file):
    """``secured(**config)``: an app with authentication on and the users above."""
    def build(**settings):
        data = tmp_path / f"secured{len(list(tmp_path.glob('secured*')))}"
        write_users(data, users_file)
        app = make_app(data_dir=str(data), auth_enabled=True, **settings)
        app.extensions[authn.EXTENSION].users.hasher = CHEAP_HASHER
        return app
    return build


def basic(name: str) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{USERS[name][0]}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition ``text``."""
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if labels else "") \
        + r" ([0-9.e+-]+)$"
    found = re.search(pattern, text, re.MULTILINE)
    assert found, (name, labels, text)
    return float(found.group(1))


# --- /health -------------------------------------------------------------------------------

def test_health_200(client):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/json"
    assert r.headers["Cache-Control"] == "no-store"
    assert json.loads(r.data) == {"status": "ok", "store": "ok",
                                  "indexer": {"status": "ok", "pending": 0}}


def test_health_503_when_the_store_cannot_be_read(make_app, tmp_path):
    app = make_app(auth_enabled=False)
    app.extensions["lakesuperior"].repository.store.close()
    r = app.test_client().get("/health")
    assert r.status_code == 503
    body = json.loads(r.data)
    assert body == {"status": "unavailable", "reason": "the store cannot be read"}
    assert str(tmp_path) not in r.get_data(as_text=True)


def test_health_503_when_the_indexer_stalls(app, client, repo):
    repo.indexer.stop()
    assert client.put("/rest/a", data=b"", content_type=TTL).status_code == 201
    watch = app.extensions[operations.EXTENSION].index
    now = [1000.0]
    watch.clock = lambda: now[0]
    assert client.get("/health").status_code == 200         # behind, not yet stalled
    now[0] += 59
    assert client.get("/health").status_code == 200
    now[0] += 2
    r = client.get("/health")
    assert r.status_code == 503
    body = json.loads(r.data)
    assert body["status"] == "unavailable" and body["store"] == "ok"
    assert body["indexer"]["status"] == "behind" and body["indexer"]["pending"] >= 1
    assert re.fullmatch(r"the indexer has taken in no write for 61 s while \d+ wait",
                        body["reason"])
    repo.index()                                             # caught up
    assert client.get("/health").status_code == 200


def test_health_stall_is_configured(make_app):
    app = make_app(health_index_stall=5, auth_enabled=False)
    repo = app.extensions["lakesuperior"].repository
    repo.indexer.stop()
    client = app.test_client()
    client.put("/rest/a", data=b"", content_type=TTL)
    watch = app.extensions[operations.EXTENSION].index
    now = [0.0]
    watch.clock = lambda: now[0]
    assert client.get("/health").status_code == 200
    now[0] += 5
    assert client.get("/health").status_code == 503


def test_health_without_the_background_indexer(make_app):
    client = make_app(background_index=False, auth_enabled=False).test_client()
    client.put("/rest/a", data=b"", content_type=TTL)
    r = client.get("/health")
    assert r.status_code == 200
    assert json.loads(r.data)["indexer"]["status"] == "off"


def test_index_watch_forgets_idle_time_while_nothing_waits():
    now = [0.0]
    watch = operations.IndexWatch(10, clock=lambda: now[0])
    assert watch.check(5, 5) is None
    now[0] += 100                       # idle, nothing pending
    assert watch.check(5, 5) is None
    assert watch.check(5, 6) is None    # a write arrives: not a stall yet
    now[0] += 10
    assert watch.check(5, 6) is not None
    assert watch.check(6, 6) is None


# --- /metrics ------------------------------------------------------------------------------

def test_metrics_401_for_anonymous_403_for_users_200_for_admins(secured):
    client = secured().test_client()
    r = client.get("/metrics")
    assert r.status_code == 401 and "administrators" in r.get_data(as_text=True)
    assert r.headers["WWW-Authenticate"].startswith("Basic ")
    assert client.get("/metrics", headers=basic("alice")).status_code == 403
    r = client.get("/metrics", headers=basic("root"))
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain; version=")
    assert "# TYPE lsup_http_requests_total counter" in r.get_data(as_text=True)


def test_metrics_open_to_the_listed_addresses(secured):
    client = secured(metrics_allowed=("10.1.0.0/16", "192.0.2.7"),
                     auth_trusted_proxies=("127.0.0.1",)).test_client()
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 200
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "192.0.2.7"}).status_code == 200
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "10.2.0.1"}).status_code == 401
    # behind a trusted proxy, the client's address counts, not the proxy's
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "127.0.0.1"},
                      headers={"X-Forwarded-For": "192.0.2.7"}).status_code == 200
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "127.0.0.1"},
                      headers={"X-Forwarded-For": "10.9.9.9"}).status_code == 401
    # from anyone else, the header is not believed
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "10.2.0.1"},
                      headers={"X-Forwarded-For": "192.0.2.7"}).status_code == 401


def test_metrics_content(client, repo):
    for _ in range(3):
        assert client.get("/rest/").status_code == 200
    assert client.get("/rest/missing").status_code == 404
    assert client.put("/rest/a", data=b"", content_type=TTL).status_code == 201
    assert client.put("/rest/bin", data=b"x" * 5000, content_type="image/png").status_code == 201
    assert client.get("/rest/bin").data == b"x" * 5000
    assert client.open("/rest/", method="BREW").status_code == 405
    text = client.get("/metrics").get_data(as_text=True)
    assert sample(text, "lsup_http_requests_total", method="GET", status="200") == 4
    assert sample(text, "lsup_http_requests_total", method="GET", status="404") == 1
    assert sample(text, "lsup_http_requests_total", method="PUT", status="201") == 2
    assert sample(text, "lsup_http_requests_total", method="other", status="405") == 1
    assert sample(text, "lsup_http_request_duration_seconds_count", method="GET") == 5
    assert sample(text, "lsup_http_request_duration_seconds_bucket", le="+Inf",
                  method="PUT") == 2
    assert sample(text, "lsup_write_lock_wait_seconds_count") >= 2
    assert sample(text, "lsup_store_up") == 1
    assert sample(text, "lsup_store_size_bytes") > 0
    assert sample(text, "lsup_index_lag_writes") >= 0
    assert sample(text, "lsup_outbox_backlog_events") == 0          # messaging off
    assert sample(text, "lsup_outbox_events") >= 2
    # the scrape counts itself once it is answered
    text = client.get("/metrics").get_data(as_text=True)
    assert sample(text, "lsup_http_requests_total", method="GET", status="200") == 5


def test_metrics_index_lag(app, client, repo):
    repo.indexer.stop()
    client.put("/rest/a", data=b"", content_type=TTL)
    text = client.get("/metrics").get_data(as_text=True)
    assert sample(text, "lsup_index_lag_writes") == repo.index_pending() >= 1


def test_metrics_store_down(make_app):
    app = make_app(auth_enabled=False)
    app.extensions["lakesuperior"].repository.store.close()
    text = app.test_client().get("/metrics").get_data(as_text=True)
    assert sample(text, "lsup_store_up") == 0
    assert "lsup_store_size_bytes" not in text


def test_metrics_are_per_app(make_app):
    """Each app counts in its own registry: no process-wide state."""
    one, two = make_app(auth_enabled=False), make_app(auth_enabled=False)
    one.test_client().get("/rest/")
    text = two.test_client().get("/metrics").get_data(as_text=True)
    assert sample(text, "lsup_http_requests_total", method="GET", status="200") == 0
