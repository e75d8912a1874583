"""Over HTTP: a version made by ``POST fcr:versions`` keeps its state when the
resource changes in the same second (the change's version takes the next second)."""
from __future__ import annotations

from lakesuperior import rdfio

from .conftest import put_ttl

TITLE = "<http://purl.org/dc/terms/title>"


def _titles(client, url: str) -> set[str]:
    r = client.get(url, headers={"Accept": rdfio.N_TRIPLES})
    assert r.status_code == 200, r.data
    return {o for _s, p, o in rdfio.parse(r.data, rdfio.N_TRIPLES, url) if p == TITLE}


def test_post_version_then_put_in_the_same_second(make_app, app_config, clock):
    client = make_app(clock=clock, **app_config).test_client()
    path = "/rest/v"                     # the clock stays in one second
    assert put_ttl(client, path, f'<> {TITLE} "one" .').status_code == 201
    made = client.post(path + "/fcr:versions")
    changed = put_ttl(client, path, f'<> {TITLE} "two" .')
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
