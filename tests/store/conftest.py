import pytest

from lakesuperior.store.quadstore import QuadStore


@pytest.fixture
def store(tmp_path):
    st = QuadStore(str(tmp_path / "store"))
    yield st
    st.close()
