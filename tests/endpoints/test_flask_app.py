"""``LsupFlask``: Flask's ``ensure_sync``, asking once per function."""
from __future__ import annotations

from flask import Flask

from lakesuperior.endpoints import authn
from lakesuperior.endpoints.app import SYNC_MEMO, LsupFlask


def test_the_app_remembers_its_hooks_after_a_request(app, client):
    assert isinstance(app, LsupFlask)
    assert client.get("/rest/").status_code == 200
    assert app.sync_known[authn._authenticate] is True     # a hook of every request


def test_a_sync_function_is_itself_and_asked_once(monkeypatch):
    app = LsupFlask(__name__)
    asked = []

    def ask(func):
        asked.append(func)
        return False
    monkeypatch.setattr("lakesuperior.endpoints.app.iscoroutinefunction", ask)

    class View:
        def get(self):
            return "x"
    for view in (View(), View()):          # a fresh bound method each time
        assert app.ensure_sync(view.get) == view.get
    assert asked == [asked[0]] and len(app.sync_known) == 1


def test_a_coroutine_function_is_made_sync_as_by_flask():
    async def view():
        return "x"

    def outcome(ensure):
        try:
            wrapped = ensure(view)
        except RuntimeError as e:           # Flask's answer without asgiref
            return str(e)
        return wrapped is not view and wrapped() == "x"
    app = LsupFlask(__name__)
    assert outcome(app.ensure_sync) == outcome(Flask(__name__).ensure_sync)
    assert app.sync_known[view] is False


def test_the_memo_is_bounded():
    app = LsupFlask(__name__)
    funcs = [(lambda i=i: i) for i in range(SYNC_MEMO + 10)]
    for func in funcs:
        assert app.ensure_sync(func) is func
    assert len(app.sync_known) == SYNC_MEMO
    assert app.ensure_sync(funcs[-1]) is funcs[-1]      # past the bound: asked again
