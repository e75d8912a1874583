"""The store environment: the owner of the LMDB environments, the format and the map size."""
from typing import Any

from typing_extensions import disjoint_base

from lakesuperior.store.durability import DurabilityGate
from lakesuperior.store.residency import MapTrimmer

FORMAT_VERSION: int
UPGRADABLE_FORMATS: tuple[int, ...]
INDEX_FORMAT_VERSION: int
DEFAULT_MAP_SIZE: int
DEFAULT_INDEX_BATCH: int
INDEX_MAP_SIZE: int
DEFAULT_IRI_CACHE: int
NO_ROOM_MARGIN: int
WRITE_AHEAD_MIN: int
WRITE_AHEAD_MAX: int

@disjoint_base
class StoreEnv:
    """The environments of a store directory: opening, format, growth, caches."""
    @property
    def path(self) -> str: ...
    @property
    def sync(self) -> bool: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def index_batch(self) -> int: ...
    @property
    def hash_bits(self) -> int: ...
    @property
    def iri_cache(self) -> int: ...
    @property
    def durability(self) -> DurabilityGate | None: ...
    @property
    def map_trimmer(self) -> MapTrimmer: ...
    def iri_cache_size(self) -> int:
        """How many IRIs the in-memory IRI cache holds."""
    def __init__(self, path: str, *, map_size: int = ..., sync: bool = True,
                 readonly: bool = False, index_batch: int = ...,
                 hash_bits: int | None = None, iri_cache: int = ...,
                 resident_map_limit: int = 0) -> None:
        """Open (creating if new) the store in directory ``path``; ``resident_map_limit``:
        the bound on the bytes of its maps this process keeps resident (0: none)."""
    def _sync_main(self) -> None:
        """Flush the main environment, meta page included (fsync)."""
    def make_durable(self) -> None:
        """Return once every write committed before the call is on disk (one
        coalesced sync, ``durability.py``; nothing to do with ``sync`` off)."""
    def _forget_cache(self) -> None:
        """Drop the term caches (after a clean-up that removed terms)."""
    def disk_size(self) -> int:
        """Bytes of the LMDB files on disk."""
    def close(self) -> None:
        """Close the environments (transactions still open become unusable)."""
    def __enter__(self) -> StoreEnv: ...
    def __exit__(self, *exc: Any) -> None: ...
