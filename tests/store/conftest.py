import pytest

from lakesuperior.store.quadstore import QuadStore


@pytest.fixture
def store(tmp_path):
    st = QuadStore(str(tmp_path / "store"), sync=False)   # durability has its own tests
    yield st
    st.close()
