"""A transaction on the store: the base of ``ReadTxn``, ``WriteTxn`` and the indexer's reads."""
from lakesuperior.store.env import StoreEnv

class Txn:
    """One LMDB transaction on the main environment; ended exactly once."""
    def __init__(self, store: StoreEnv, write: bool) -> None: ...
    def abort(self) -> None:
        """End the transaction; nothing it wrote is kept."""
