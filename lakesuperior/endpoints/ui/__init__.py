"""The staff forms (blueprint ``ui``, at ``/ui``): create, upload, edit, delete,
restore, purge, versions and sharing, beside the read-only pages the LDP
endpoint serves as HTML.

Forms post here with the resource's uid in the field ``path``; a write answers
303 See Other to the page it leads to (POST/redirect/GET), a refused one a page
that says what happened. Every write goes through the request's agent view
(``access.request_repository``), as the LDP endpoints' do. What each route does
is in its module: ``containers`` (new container, upload), ``editing`` (Turtle,
Dublin Core, a binary's file), ``removal`` (delete, tombstone, restore, purge),
``versions`` and ``access`` (the effective ACL, grant, revoke).
"""
from __future__ import annotations

from flask import Blueprint

from lakesuperior.endpoints.ui import access, containers, editing, removal, versions

bp = Blueprint("ui", __name__)

#: (rule, endpoint, view, methods)
ROUTES = (
    ("/create", "create", containers.create_container, ["POST"]),
    ("/upload", "upload", containers.upload, ["POST"]),
    ("/edit", "edit", editing.edit_page, ["GET"]),
    ("/edit", "save", editing.save_turtle, ["POST"]),
    ("/describe", "describe", editing.save_dublin_core, ["POST"]),
    ("/binary", "binary", editing.save_binary, ["POST"]),
    ("/delete", "confirm_delete", removal.confirm_delete, ["GET"]),
    ("/delete", "delete", removal.delete, ["POST"]),
    ("/tombstone", "tombstone", removal.tombstone, ["GET"]),
    ("/restore", "restore", removal.restore, ["POST"]),
    ("/purge", "confirm_purge", removal.confirm_purge, ["GET"]),
    ("/purge", "purge", removal.purge, ["POST"]),
    ("/version", "version", versions.make_version, ["POST"]),
    ("/revert", "confirm_revert", versions.confirm_revert, ["GET"]),
    ("/revert", "revert", versions.revert, ["POST"]),
    ("/access", "access", access.access_page, ["GET"]),
    ("/access/grant", "grant", access.grant, ["POST"]),
    ("/access/revoke", "revoke", access.revoke, ["POST"]),
)

for _rule, _endpoint, _view, _methods in ROUTES:
    bp.add_url_rule(_rule, _endpoint, _view, methods=_methods)
