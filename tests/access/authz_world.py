"""The authorization matrix's spec and fixtures: who should reach each endpoint and socket command,
a fresh "world" (folder, notebook, run, link, shares) to aim requests at, and one request per endpoint.

Roles: a share on the *folder* /teamN gives vera viewer, rudy runner and eddie editor on the
notebook /teamN/proj/<nb>, so every row also tests inheritance; alice created the folder and owns
the notebook; mallory is logged in with no role; the link holder is anonymous with the link's token.
rita is a reader (site role) with an editor share on the folder: she gets what a viewer gets, less
what makes a notebook of her own (create, import, duplicate, fork).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable

from console.roles import ROLES as NOTEBOOK_ROLES, at_least
from console.store.dashboards import Tile

# The matrix's columns: callers with no notebook role, the reader, then each notebook role, weakest first.
CALLERS = ("anonymous", "link", "stranger", "reader", *NOTEBOOK_ROLES)
USER_OF = {"stranger": "mallory", "reader": "rita", "viewer": "vera", "runner": "rudy", "editor": "eddie",
           "owner": "alice"}
# What a reader's editor share gives: never more than a viewer's role (console/roles.py SITE_CAP).
READER_HOLDS = "viewer"

# endpoint -> who may use it: anyone | login | viewer | runner | editor | owner (on the notebook,
# or for folder endpoints on the folder). New endpoints must be added here, or the test fails.
SPEC: dict[str, str] = {
    "static": "anyone", "pages.login": "anyone", "publish.page": "anyone", "publish.link": "anyone",
    "api.health": "anyone", "auth.login": "anyone", "auth.logout": "anyone", "auth.me": "anyone",
    "pages.index": "login", "pages.notebook": "login", "auth.password": "login", "sharing.users": "login",
    "api.notebooks.list": "login", "api.notebooks.create": "login", "api.transfer.import": "login",
    "api.folders.list": "login", "api.workspace.listing": "login", "api.workspace.shared": "login",
    "api.search.search": "login",
    "api.notebooks.get": "viewer", "api.transfer.export": "viewer", "api.environment.get": "viewer",
    "api.revisions.list": "viewer",
    "api.revisions.get": "viewer", "api.revisions.diff": "viewer", "api.notebooks.duplicate": "viewer",
    "api.notebooks.fork": "viewer", "runs.kernel": "viewer", "runs.notebook_runs": "viewer",
    "runs.get_run": "viewer", "runs.outputs": "viewer", "runs.log": "viewer", "runs.manifest": "viewer",
    "runs.diff": "viewer", "runs.replay": "runner",
    "runs.lineage": "login",  # the lake's tables are the members'; the runs listed are filtered per caller
    "runs.run": "runner", "runs.interrupt": "runner", "runs.restart": "runner",
    "api.results.page": "runner", "api.results.download": "runner",
    "api.complete.complete": "runner", "api.complete.inspect": "runner",
    "api.notebooks.replace": "editor", "api.notebooks.rename": "editor", "api.cells.add": "editor",
    "api.cells.edit": "editor", "api.cells.delete": "editor", "api.cells.move": "editor",
    "api.revisions.restore": "editor", "api.revisions.save": "editor", "api.folders.create": "editor",
    "api.outputs.clear": "editor",
    "api.notebooks.move": "owner", "api.notebooks.delete": "owner", "api.folders.rename": "owner",
    "api.folders.delete": "owner", "sharing.shares": "owner", "sharing.share_set": "owner",
    "sharing.share_delete": "owner", "sharing.links": "owner", "sharing.link_create": "owner",
    "sharing.link_revoke": "owner", "sharing.folder_shares": "owner", "sharing.folder_share_set": "owner",
    "sharing.folder_share_delete": "owner",
    # jobs: scheduling needs the editor role; changing a job, its owner (or the notebook's: alice is both)
    "jobs.page": "login", "jobs.preview": "login", "jobs.list": "login", "jobs.create": "editor",
    "jobs.notebook_jobs": "viewer", "jobs.params": "viewer", "jobs.get": "viewer", "jobs.runs": "viewer",
    "jobs.run": "runner", "jobs.update": "owner", "jobs.delete": "owner",
    # the data panel (console/server/api/lake.py): the shared lake, members only
    "lake.catalog": "login", "lake.table": "login", "lake.files": "login", "lake.upload": "login",
    "lake.session_tables": "runner", "lake.file_schema": "runner", "lake.session_variables": "runner",
    # running sessions (console/server/api/running.py): the list is filtered per caller; Shut down is the owner's
    "sessions.page": "login", "sessions.list": "login", "sessions.stop": "owner",
    # the user docs (console/server/api/userdocs.py): anyone logged in, readers too
    "docs.page": "login", "docs.markdown": "login",
    # comments on cells (console/server/api/comments.py): whoever reads the notebook comments and
    # resolves (the request resolves a thread); deleting is the author's, and the world's comment is alice's
    "api.comments.list": "viewer", "api.comments.create": "viewer", "api.comments.update": "viewer",
    "api.comments.delete": "owner",
    # dashboards (console/server/api/dashboards.py): viewers read, editors pin and arrange; a link shows it
    "dashboards.page": "login", "dashboards.get": "viewer", "dashboards.replace": "editor",
    "dashboards.pin": "editor", "dashboards.unpin": "editor", "dashboards.link_page": "anyone",
    "dashboards.link": "anyone",
}

# Endpoints that make a notebook or folder the caller owns (and so could run): members only, even
# where the level above lets a viewer or any login in.
MEMBERS_ONLY = {"api.notebooks.create", "api.transfer.import", "api.notebooks.duplicate", "api.notebooks.fork",
                "api.folders.create", "jobs.create", "jobs.preview",
                "lake.catalog", "lake.table", "lake.files", "lake.upload", "sessions.list", "runs.lineage"}

SOCKET_SPEC: dict[str, str] = {
    "join": "viewer", "leave": "login", "run_cell": "runner", "run_all": "runner", "run_from": "runner",
    "interrupt": "runner", "restart": "runner", "doc_sync": "viewer", "awareness": "viewer", "doc_update": "editor",
    "watch_jobs": "login",
}

# Endpoints whose request logs the client out or in: they get clients of their own.
FRESH_CLIENT = {"auth.logout", "auth.login"}

_counter = itertools.count(1)


@dataclass
class World:
    folder: str
    nb: str
    cells: list[str]
    run: str
    token: str
    share: int
    folder_share: int
    sub: str
    job: str
    comment: str  # a thread alice began on the first cell


def build_world(store: Any) -> World:
    users = {u.username: u for u in store.list_users()}
    n = next(_counter)
    folder = store.create_folder(f"/team{n}", owner_id=users["alice"].id)
    nb = store.create_notebook("nb", f"{folder}/proj", owner_id=users["alice"].id,
                               cells=[{"kind": "mlsql", "source": "select 1 as a;"},
                                      {"kind": "markdown", "source": "# hi"}])
    nb = store.update_notebook(nb.id, 1, cells=[{"id": c.id, "kind": c.kind, "source": c.source + "\n"}
                                                  for c in nb.cells], author_id=users["alice"].id)
    for name, role in (("vera", "viewer"), ("rudy", "runner"), ("eddie", "editor"), ("rita", "editor")):
        store.set_share(users[name].id, role, folder_path=folder)
    share = store.set_share(users["admin"].id, "viewer", notebook_id=nb.id)
    fshare = store.set_share(users["admin"].id, "viewer", folder_path=folder)
    run = store.create_run(nb.id, nb.cells[0].id, "select 1 as a;", users["alice"].id)
    store.append_output(run.id, [{"seq": 1, "text": "hello\n"}])
    store.finish_run(run.id, "done", result={"type": "result", "name": "a", "columns": [{"name": "a", "type": "int"}],
                                             "rows": [[1]], "total_rows": 1})
    link = store.create_link(nb.id, users["alice"].id)
    sub = store.create_folder(f"{folder}/proj/sub", owner_id=users["alice"].id)
    job = store.create_job(nb.id, users["alice"].id, "nightly", schedule_kind="cron", cron="0 2 * * *",
                           next_run_at=None)
    comment = store.create_comment(nb.id, users["alice"].id, "a note", cell_id=nb.cells[0].id)
    store.pin_tile(nb.id, Tile(nb.cells[0].id, "chart"), users["alice"].id)  # the dashboard's one tile
    return World(folder, nb.id, [c.id for c in nb.cells], run.id, link.token, share.id, fshare.id, sub, job.id,
                 comment.id)


Request = tuple[str, str, Any]


def request_for(endpoint: str, w: World) -> Request:
    """(method, url, json body) of a well-formed request to `endpoint` against world `w`."""
    nb = f"/api/notebooks/{w.nb}"
    c0, c1 = w.cells
    table: dict[str, Callable[[], Request]] = {
        "static": lambda: ("GET", "/static/login.html", None),
        "pages.login": lambda: ("GET", "/login", None),
        "pages.index": lambda: ("GET", "/", None),
        "pages.notebook": lambda: ("GET", f"/notebooks/{w.nb}", None),
        "publish.page": lambda: ("GET", f"/p/{w.token}", None),
        "publish.link": lambda: ("GET", f"/api/links/{w.token}", None),
        "api.health": lambda: ("GET", "/api/health", None),
        "auth.login": lambda: ("POST", "/api/login", {"username": "mallory", "password": "correct horse battery"}),
        "auth.logout": lambda: ("POST", "/api/logout", None),
        "auth.me": lambda: ("GET", "/api/me", None),
        # A too-short new password: the handler answers 400 once the caller is known.
        "auth.password": lambda: ("POST", "/api/me/password", {"old_password": "correct horse battery",
                                                              "new_password": "x"}),
        "sharing.users": lambda: ("GET", "/api/users", None),
        "api.notebooks.list": lambda: ("GET", f"/api/notebooks?folder={w.folder}/proj", None),
        "api.notebooks.create": lambda: ("POST", "/api/notebooks", {"name": "new"}),
        "api.transfer.import": lambda: ("POST", "/api/notebooks/import", {
            "format": "mlsql-console-notebook", "version": 1, "name": "imp", "cells": []}),
        "api.folders.list": lambda: ("GET", f"/api/folders?path={w.folder}", None),
        "api.workspace.listing": lambda: ("GET", f"/api/workspace?folder={w.folder}/proj&scope=all", None),
        "api.workspace.shared": lambda: ("GET", "/api/workspace/shared", None),
        "api.search.search": lambda: ("GET", "/api/search?q=select", None),
        "api.notebooks.get": lambda: ("GET", nb, None),
        "api.transfer.export": lambda: ("GET", f"{nb}/export?format=ipynb", None),
        "api.environment.get": lambda: ("GET", f"{nb}/environment", None),
        "api.revisions.list": lambda: ("GET", f"{nb}/revisions", None),
        "api.revisions.get": lambda: ("GET", f"{nb}/revisions/1", None),
        "api.revisions.diff": lambda: ("GET", f"{nb}/revisions/diff?from=1&to=2", None),
        "api.notebooks.duplicate": lambda: ("POST", f"{nb}/duplicate", {"folder": "/"}),
        "api.notebooks.fork": lambda: ("POST", f"{nb}/fork", None),
        "runs.kernel": lambda: ("GET", f"{nb}/kernel", None),
        "api.results.page": lambda: ("GET", f"{nb}/cells/{c0}/result?offset=0&limit=10", None),
        "api.results.download": lambda: ("GET", f"{nb}/cells/{c0}/result/download/csv", None),
        "runs.notebook_runs": lambda: ("GET", f"{nb}/runs", None),
        "runs.get_run": lambda: ("GET", f"/api/runs/{w.run}", None),
        "runs.outputs": lambda: ("GET", f"/api/runs/{w.run}/outputs?since=0", None),
        "runs.log": lambda: ("GET", f"/api/runs/{w.run}/log", None),
        "runs.manifest": lambda: ("GET", f"/api/runs/{w.run}/manifest", None),
        "runs.diff": lambda: ("GET", f"/api/runs/{w.run}/diff/{w.run}", None),
        "runs.replay": lambda: ("POST", f"/api/runs/{w.run}/replay", {}),
        "runs.lineage": lambda: ("GET", "/api/lineage?table=db.t", None),
        "runs.run": lambda: ("POST", f"{nb}/run", {"all": True}),
        "runs.interrupt": lambda: ("POST", f"{nb}/interrupt", None),
        "runs.restart": lambda: ("POST", f"{nb}/restart", None),
        "api.complete.complete": lambda: ("POST", f"{nb}/complete", {"source": "sel", "cursor": 3}),
        "api.complete.inspect": lambda: ("GET", f"{nb}/inspect?name=t", None),
        "api.notebooks.replace": lambda: ("PUT", nb, {"base_revision": 2, "cells": [{"kind": "mlsql", "source": "x"}]}),
        "api.notebooks.rename": lambda: ("POST", f"{nb}/rename", {"name": "renamed"}),
        "api.cells.add": lambda: ("POST", f"{nb}/cells", {"base_revision": 2, "source": "y"}),
        "api.cells.edit": lambda: ("PATCH", f"{nb}/cells/{c0}", {"base_revision": 2, "source": "z"}),
        "api.cells.delete": lambda: ("DELETE", f"{nb}/cells/{c1}?base_revision=2", None),
        "api.cells.move": lambda: ("POST", f"{nb}/cells/{c1}/move", {"base_revision": 2, "position": 0}),
        "api.revisions.restore": lambda: ("POST", f"{nb}/revisions/1/restore", {"base_revision": 2}),
        "api.revisions.save": lambda: ("POST", f"{nb}/revisions", {"label": "a version"}),
        "api.outputs.clear": lambda: ("POST", f"{nb}/outputs/clear", {"cell_id": c0}),
        "api.folders.create": lambda: ("POST", "/api/folders", {"path": f"{w.folder}/proj/new"}),
        "api.notebooks.move": lambda: ("POST", f"{nb}/move", {"folder": f"{w.folder}/other"}),
        "api.notebooks.delete": lambda: ("DELETE", nb, None),
        "api.folders.rename": lambda: ("POST", "/api/folders/rename", {"path": w.sub, "new_path": f"{w.folder}/moved"}),
        "api.folders.delete": lambda: ("DELETE", f"/api/folders?path={w.sub}", None),
        "sharing.shares": lambda: ("GET", f"{nb}/shares", None),
        "sharing.share_set": lambda: ("POST", f"{nb}/shares", {"user": "mallory", "role": "viewer"}),
        "sharing.share_delete": lambda: ("DELETE", f"{nb}/shares/{w.share}", None),
        "sharing.links": lambda: ("GET", f"{nb}/links", None),
        "sharing.link_create": lambda: ("POST", f"{nb}/links", None),
        "sharing.link_revoke": lambda: ("DELETE", f"{nb}/links/{w.token}", None),
        "sharing.folder_shares": lambda: ("GET", f"/api/folders/shares?path={w.folder}", None),
        "sharing.folder_share_set": lambda: ("POST", "/api/folders/shares",
                                             {"path": w.folder, "user": "mallory", "role": "viewer"}),
        "sharing.folder_share_delete": lambda: ("DELETE", f"/api/folders/shares/{w.folder_share}", None),
        "jobs.page": lambda: ("GET", "/jobs", None),
        "lake.catalog": lambda: ("GET", "/api/lake", None),
        "sessions.page": lambda: ("GET", "/running", None),
        "docs.page": lambda: ("GET", "/docs/language", None),
        "docs.markdown": lambda: ("GET", "/api/docs/language", None),
        "sessions.list": lambda: ("GET", "/api/sessions", None),
        "sessions.stop": lambda: ("POST", f"/api/sessions/{w.nb}/stop", {}),
        "lake.table": lambda: ("GET", "/api/lake/tables/matrix.t", None),  # made by test_access_matrix
        "lake.files": lambda: ("GET", "/api/lake/files", None),
        "lake.session_tables": lambda: ("GET", f"/api/lake/session/{w.nb}", None),
        "lake.session_variables": lambda: ("GET", f"/api/lake/session/{w.nb}/variables", None),
        "lake.file_schema": lambda: ("GET", f"/api/lake/session/{w.nb}/schema?path=matrix/schema.csv", None),
        "lake.upload": lambda: ("POST", "/api/lake/upload?name=matrix.json&overwrite=true", {"a": 1}),
        "jobs.preview": lambda: ("GET", "/api/jobs/preview?cron=0+2+*+*+*", None),
        "jobs.list": lambda: ("GET", "/api/jobs", None),
        "jobs.create": lambda: ("POST", "/api/jobs", {"notebook_id": w.nb, "cron": "0 2 * * *"}),
        "jobs.notebook_jobs": lambda: ("GET", f"{nb}/jobs", None),
        "jobs.params": lambda: ("GET", f"{nb}/params", None),
        "jobs.get": lambda: ("GET", f"/api/jobs/{w.job}", None),
        "jobs.runs": lambda: ("GET", f"/api/jobs/{w.job}/runs", None),
        "jobs.run": lambda: ("POST", f"/api/jobs/{w.job}/run", {}),
        "jobs.update": lambda: ("PATCH", f"/api/jobs/{w.job}", {"retries": 1}),
        "jobs.delete": lambda: ("DELETE", f"/api/jobs/{w.job}", None),
        "api.comments.list": lambda: ("GET", f"{nb}/comments", None),
        "api.comments.create": lambda: ("POST", f"{nb}/comments", {"cell_id": c0, "text": "a question"}),
        "api.comments.update": lambda: ("PATCH", f"{nb}/comments/{w.comment}", {"resolved": True}),
        "api.comments.delete": lambda: ("DELETE", f"{nb}/comments/{w.comment}", None),
        "dashboards.page": lambda: ("GET", f"/d/{w.nb}", None),
        "dashboards.get": lambda: ("GET", f"{nb}/dashboard", None),
        "dashboards.replace": lambda: ("PUT", f"{nb}/dashboard",
                                       {"tiles": [{"cell_id": c0, "kind": "chart", "width": 4}]}),
        "dashboards.pin": lambda: ("POST", f"{nb}/dashboard/tiles", {"cell_id": c1, "kind": "result"}),
        "dashboards.unpin": lambda: ("DELETE", f"{nb}/dashboard/tiles/chart/{c0}", None),
        "dashboards.link_page": lambda: ("GET", f"/p/{w.token}/dashboard", None),
        "dashboards.link": lambda: ("GET", f"/api/links/{w.token}/dashboard", None),
    }
    return table[endpoint]()


def expected(level: str, role: str, endpoint: str = "") -> bool:
    if level == "anyone":
        return True
    if role in ("anonymous", "link"):
        return False
    if role == "reader":
        if endpoint in MEMBERS_ONLY:
            return False
        role = READER_HOLDS
    if level == "login":
        return True
    return role != "stranger" and at_least(role, level)
