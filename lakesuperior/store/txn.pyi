"""A transaction on the store: the base of ``ReadTxn``, ``WriteTxn`` and the indexer's reads."""
from typing import Self

from typing_extensions import disjoint_base

from lakesuperior.store.env import StoreEnv

@disjoint_base
class Txn:
    """One LMDB transaction on the main environment; ended exactly once."""
    def __new__(cls, store: StoreEnv, write: bool) -> Self: ...
    def abort(self) -> None:
        """End the transaction; nothing it wrote is kept."""
