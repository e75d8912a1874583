"""The union-graph indexer: applies the change log of ``main`` to ``index``."""
from struct import Struct

from lakesuperior.store.env import StoreEnv

LOG_HEAD: Struct

class Indexer:
    """Applies logged changes to the ``index`` environment, in batches."""
    def __init__(self, store: StoreEnv) -> None: ...
    def run(self, until: int = 0) -> int:
        """Apply log entries (all, or up to ``until``); returns how many."""
