"""Events on a real ActiveMQ (started by the suite): Fedora 6's message format
(Fedora API 1.0 §6), order, at-least-once delivery through broker and server
crashes, and a JMS consumer over OpenWire."""
from __future__ import annotations

import json
import subprocess
import threading
import time
import warnings
from pathlib import Path

import pytest
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from lakesuperior.bench.activemq import classpath
from lakesuperior.exceptions import BrokerError, InvalidResourceError, ServerManagedTermError
from lakesuperior.messaging import activitystreams_context
from lakesuperior.messaging.broker import BrokerConnection, probe
from lakesuperior.messaging.fedora import AS_NS, activity_type
from lakesuperior.messaging.publisher import Publisher, PublisherLock, PublisherThread

from .conftest import WAIT, messaging

pytestmark = pytest.mark.slow

AS = AS_NS + "#"
LDP = "http://www.w3.org/ns/ldp#"
SERVER_MANAGED = b'<> <http://fedora.info/definitions/v4/repository#created> "x" .'
FEDORA_HEADERS = ("identifier", "eventType", "resourceType", "user", "userAgent", "baseURL",
                  "timestamp", "eventID")


def drain(pub: Publisher) -> int:
    n = 0
    while True:
        k = pub.drain_once()
        if k == 0:
            return n
        n += k


def expand(body: dict) -> Graph:
    """The body as RDF, its Activity Streams context taken from the bundled copy."""
    doc = dict(body)
    assert doc["@context"][0] == AS_NS
    doc["@context"] = [activitystreams_context()["@context"], *body["@context"][1:]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # rdflib's own internals
        ds = Dataset().parse(data=json.dumps(doc), format="json-ld")
        g = Graph()
        for s, p, o, _g in ds.quads():
            g.add((s, p, o))
    return g


def test_fedora_6_message_body_and_headers(repo_factory, running_broker, topic, subscribe):
    repo = repo_factory(**messaging(running_broker, topic), agent="alice")
    sub = subscribe(topic)
    repo.create_or_replace("/a", data=b"<> a <http://ex.org/Book> .", media_type="text/turtle")
    pub = Publisher(repo, repo.config)
    assert drain(pub) == 2
    msgs = sub.wait_for(lambda m: len(m) >= 2)
    headers, body = next((h, b) for h, b in msgs if h["org.fcrepo.jms.identifier"] == "/a")
    change = next(c for c in repo.changes() if c.uid == "/a")
    # headers, named and formatted as fcrepo's DefaultMessageFactory sets them
    assert all("org.fcrepo.jms." + h in headers for h in FEDORA_HEADERS)
    assert headers["org.fcrepo.jms.eventType"] == AS + "Create"
    assert headers["org.fcrepo.jms.baseURL"] == "http://test.example/rest"
    assert headers["org.fcrepo.jms.user"] == "alice"
    assert headers["org.fcrepo.jms.eventID"] == change.id == body["id"]
    assert headers["org.fcrepo.jms.timestamp"] == str(change.millis)
    assert LDP + "BasicContainer" in headers["org.fcrepo.jms.resourceType"].split(",")
    assert headers["persistent"] == "true"
    # the body, as JSON
    assert body["type"] == ["Create"] and body["name"] == "create resource"
    assert body["object"]["id"] == "http://test.example/rest/a"
    assert body["object"]["isPartOf"] == "http://test.example/rest"
    assert body["published"].endswith("Z")
    # and as JSON-LD, expanded with the bundled Activity Streams context
    g = expand(body)
    ev, obj = URIRef(change.id), URIRef("http://test.example/rest/a")
    assert (ev, RDF.type, URIRef(AS + "Create")) in g
    assert (ev, URIRef(AS + "object"), obj) in g
    assert (ev, URIRef(AS + "actor"), URIRef("info:fedora/local-user#alice")) in g
    assert (URIRef("info:fedora/local-user#alice"), RDF.type, URIRef(AS + "Person")) in g
    assert any(o.datatype == XSD.dateTime for o in g.objects(ev, URIRef(AS + "published")))
    for t in (LDP + "Container", LDP + "RDFSource", "http://ex.org/Book",
              "http://www.w3.org/ns/prov#Entity",
              "http://fedora.info/definitions/v4/repository#Resource"):
        assert (obj, RDF.type, URIRef(t)) in g
    assert (obj, URIRef("http://purl.org/dc/terms/isPartOf"),
            URIRef("http://test.example/rest")) in g
    apps = [a for a in g.objects(ev, URIRef(AS + "actor"))
            if (a, RDF.type, URIRef(AS + "Application")) in g]
    assert [str(n) for n in g.objects(apps[0], URIRef(AS + "name"))][0].startswith(
        "Lakesuperior/")
    assert not any(isinstance(o, Literal) and "activitystreams" in o for o in g.objects())


def test_each_kind_of_change_gives_its_events_in_commit_order(repo_factory, running_broker,
                                                              topic, subscribe):
    repo = repo_factory(**messaging(running_broker, topic))
    sub = subscribe(topic)
    repo.create_or_replace("/a")
    repo.update("/a", "INSERT DATA { <> <http://ex.org/p> 1 }")
    repo.create_version("/a")
    repo.delete("/a")
    repo.resurrect("/a")
    repo.delete("/a", soft=False)
    with pytest.raises(RuntimeError):
        with repo.transaction():                # rolled back: nothing
            repo.create_or_replace("/never")
            raise RuntimeError
    with pytest.raises(InvalidResourceError):
        repo.delete("/")                        # failed: nothing
    expected = [(c.uid, activity_type(c), c.id) for c in repo.changes()]
    assert drain(Publisher(repo, repo.config)) == len(expected) == 10
    msgs = sub.wait_for(lambda m: len(m) >= len(expected))
    got = [(h["org.fcrepo.jms.identifier"], b["type"][0], b["id"]) for h, b in msgs]
    assert got == expected
    assert [t for u, t, _ in got if u == "/a"] == [
        "Create", "Update", "Update", "Delete", "Create", "Purge"]
    assert sub.wait_for(lambda m: len(m) > len(expected), timeout=1) == msgs   # no more
    assert repo.feed_state()["published"] == repo.feed_state()["seq"]


def test_broker_down_writes_go_on_backlog_shows_and_drains_by_itself(
        repo_factory, running_broker, queue, subscribe):
    """Broker stopped in the middle of a 2,000-resource ingest and started again:
    every event arrives, in order per resource, none for failed writes."""
    repo = repo_factory(**messaging(running_broker, queue))
    thread = PublisherThread(repo, repo.config, max_backoff=1.0).start()
    created, refused = [], 0
    try:
        repo.create_or_replace("/batch")
        for i in range(2000):
            if i == 700:
                running_broker.stop()
            if i == 1400:
                running_broker.start()
            if i % 100 == 50:       # failed writes among them
                with pytest.raises(ServerManagedTermError):
                    repo.create_or_replace(f"/batch/bad{i}", data=SERVER_MANAGED,
                                           media_type="text/turtle")
                with pytest.raises(RuntimeError):
                    with repo.transaction():
                        repo.create_or_replace(f"/batch/rolled-back{i}")
                        raise RuntimeError("roll back")
                refused += 1
            repo.create_or_replace(f"/batch/r{i}")
            created.append(f"/batch/r{i}")
        seq = repo.feed_state()["seq"]
        deadline = time.monotonic() + 120
        while repo.feed_state()["published"] < seq and time.monotonic() < deadline:
            time.sleep(0.2)
        assert repo.feed_state()["published"] == seq
    finally:
        thread.stop()
    assert refused == 20 and not thread.thread.is_alive()
    sub = subscribe(queue)
    msgs = sub.wait_for(lambda m: len({h["org.fcrepo.jms.eventID"] for h, _ in m}) >= seq)
    feed = list(repo.changes())
    ids = [h["org.fcrepo.jms.eventID"] for h, _ in msgs]
    assert set(ids) == {c.id for c in feed}                     # every event, by id
    creates = [h["org.fcrepo.jms.identifier"] for h, b in msgs if b["type"] == ["Create"]]
    assert sorted(set(creates)) == sorted(["/batch"] + created)  # none for failed writes
    batch_ids = [c.id for c in feed if c.uid == "/batch"]
    wanted = set(batch_ids)
    first_seen = list(dict.fromkeys(i for i in ids if i in wanted))
    assert first_seen == batch_ids                               # order per resource


def test_writes_never_wait_for_an_unreachable_broker(repo_factory, tmp_path):
    repo = repo_factory(messaging_broker_url="stomp://127.0.0.1:9",
                        messaging_destination="/topic/fedora")
    pub = Publisher(repo, repo.config)
    repo.create_or_replace("/a")
    with pytest.raises(BrokerError, match="Cannot connect to the broker at 127.0.0.1:9"):
        pub.drain_once()
    repo.create_or_replace("/b")
    st = repo.feed_state()
    assert st["published"] == 0 and st["seq"] == 4
    assert probe(repo.config).startswith("down: Cannot connect")
    stop = threading.Event()
    runner = threading.Thread(target=pub.run, args=(stop,))
    runner.start()
    deadline = time.monotonic() + WAIT
    while not pub.status.broker.startswith("down") and time.monotonic() < deadline:
        time.sleep(0.05)
    repo.create_or_replace("/c")        # while the publisher backs off
    stop.set()
    runner.join(WAIT)
    assert pub.status.broker.startswith("down: Cannot connect") and not runner.is_alive()
    assert repo.feed_state()["seq"] == 6 and repo.feed_state()["published"] == 0


def test_one_publisher_per_data_directory(tmp_path):
    a, b = PublisherLock(str(tmp_path)), PublisherLock(str(tmp_path))
    assert a.acquire() and a.held
    assert not b.acquire() and not b.held
    a.release()
    assert b.acquire()
    b.release()


def test_password_is_not_in_the_connection_repr(repo_factory, running_broker, topic):
    repo = repo_factory(**messaging(running_broker, topic, messaging_user="u",
                                    messaging_password="hunter2"))
    conn = BrokerConnection(repo.config)
    assert "hunter2" not in repr(conn) and str(running_broker.stomp_port) in repr(conn)


def test_openwire_jms_consumer_sees_fedora_headers(repo_factory, running_broker, topic,
                                                   tmp_path):
    """A JMS client over OpenWire (ActiveMQ's own client jars) on topic ``fedora-...``."""
    src = Path(__file__).with_name("JmsConsumer.java")
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", classpath(), str(src)], check=True,
                   timeout=120)
    repo = repo_factory(**messaging(running_broker, topic))
    java = subprocess.Popen(
        ["java", "-cp", f"{tmp_path}:{classpath()}", "JmsConsumer", running_broker.openwire_url,
         topic.split("/", 2)[2], "2", "60000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert java.stdout.readline().strip() == "READY"
        repo.create_or_replace("/jms")
        assert drain(Publisher(repo, repo.config)) == 2
        out, _ = java.communicate(timeout=WAIT + 60)
    finally:
        if java.poll() is None:
            java.kill()
            java.wait()
    messages = [m for m in out.split("END\n") if m.strip()]
    assert len(messages) == 2 and "TIMEOUT" not in out
    msg = next(m for m in messages if "org.fcrepo.jms.identifier\t/jms\n" in m)
    props = dict(line.split("\t")[1:3] for line in msg.splitlines() if line.startswith("P\t"))
    change = next(c for c in repo.changes() if c.uid == "/jms")
    assert props["org.fcrepo.jms.eventType"] == AS + "Create"
    assert props["org.fcrepo.jms.eventID"] == change.id
    assert props["org.fcrepo.jms.baseURL"] == "http://test.example/rest"
    assert all("org.fcrepo.jms." + h in props for h in FEDORA_HEADERS)
    assert f"L\t{change.millis}\n" in msg                      # a long, as Fedora's
    text = next(line for line in msg.splitlines() if line.startswith(("TEXT", "NOTTEXT")))
    assert text.startswith("TEXT\t")                            # a JMS TextMessage
    assert json.loads(text.split("\t", 1)[1])["id"] == change.id
