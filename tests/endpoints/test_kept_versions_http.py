"""Over HTTP: a version made by ``POST fcr:versions`` keeps its state when the
resource changes in the same second (the change's version takes the next second)."""
from __future__ import annotations

import time

from lakesuperior import rdfio

from .conftest import put_ttl

TITLE = "<http://purl.org/dc/terms/title>"


def _titles(client, url: str) -> set[str]:
    r = client.get(url, headers={"Accept": rdfio.N_TRIPLES})
    assert r.status_code == 200, r.data
    return {o for _s, p, o in rdfio.parse(r.data, rdfio.N_TRIPLES, url) if p == TITLE}


def test_post_version_then_put_in_the_same_second(client):
    for attempt in range(20):           # until the POST and the PUT fall in one second
        path = f"/rest/v{attempt}"
        assert put_ttl(client, path, f'<> {TITLE} "one" .').status_code == 201
        start = time.time()
        made = client.post(path + "/fcr:versions")
        changed = put_ttl(client, path, f'<> {TITLE} "two" .')
        if int(time.time()) == int(start):
            break
    else:
        raise AssertionError("no POST and PUT in one second in 20 attempts")
    assert made.status_code == 201 and changed.status_code == 204
    memento = made.headers["Location"]
    assert _titles(client, memento) == {'"one"'}
    assert _titles(client, f"http://localhost{path}") == {'"two"'}
    tm = client.get(path + "/fcr:versions", headers={"Accept": "application/link-format"})
    later = [line for line in tm.get_data(as_text=True).split(",\n")
             if 'rel="memento"' in line and memento not in line]
    assert later, tm.data                # the PUT's version is another memento
    url = later[-1].split(">", 1)[0].lstrip("<")
    assert _titles(client, url) == {'"two"'}
