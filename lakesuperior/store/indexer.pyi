"""The union-graph indexer: applies the change log of ``main`` to ``index``."""
from struct import Struct
from typing import Self

from typing_extensions import disjoint_base

from lakesuperior.store.env import StoreEnv

LOG_HEAD: Struct
MAX_BATCH_TRIPLES: int
MAX_CANCEL_LOOKS: int

@disjoint_base
class Indexer:
    """Applies logged changes to the ``index`` environment, in batches."""
    def __new__(cls, store: StoreEnv) -> Self: ...
    def run(self, until: int = 0, batches: int = 0) -> int:
        """Apply log entries (all, or up to ``until``; at most ``batches`` index
        transactions, 0: no limit); returns how many (graphs, in a rebuild)."""
