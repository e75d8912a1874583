"""The publisher sends only events that are on disk: with ``store.sync`` on, a
machine crash cannot undo a commit whose events were published
(``store/durability.py``)."""
from __future__ import annotations

from lakesuperior.messaging.publisher import Publisher
from lakesuperior.store.durability import DurabilityGate

P = "<http://ex.org/p>"


class RecordingBroker:
    """Stands for the broker connection: records the gate when asked to send."""

    def __init__(self, gate: DurabilityGate):
        self.gate = gate
        self.seen: list[tuple[int, int, int]] = []

    def send(self, changes) -> int:
        self.seen.append((self.gate.syncs, self.gate.durable, self.gate.issued))
        return len(changes)

    def close(self) -> None:
        pass


def test_publisher_syncs_before_it_publishes_a_batch(repo_factory):
    repo = repo_factory(sync=True, messaging_broker_url="stomp://127.0.0.1:1")
    repo.create_or_replace("/a")
    gate = repo.store.durability
    # Events another process committed and has not synced yet:
    with repo.store.write(durable=False) as txn:
        txn.add_graph("<urn:other>", [("<urn:s>", P, '"x"')])
    syncs = gate.syncs
    pub = Publisher(repo, repo.config)
    pub.broker = RecordingBroker(gate)
    assert pub.drain_once() == 2
    [(synced, durable, issued)] = pub.broker.seen
    assert synced == syncs + 1 and durable == issued     # the batch's own sync, finished
