"""Who may do what: site roles of accounts, roles on notebooks and folders, and the one policy
table of every HTTP endpoint and every Socket.IO command.

Site roles (console/roles.py) rank reader < member < admin: what an account may do at all. Notebook
roles rank viewer < runner < editor < owner. A user's role on a notebook is the strongest of: owning
it, a share on it, a share on a folder at or above it, owning (having created) such a folder;
admins are owners of everything. A reader's roles are capped at viewer wherever they are computed
(role_of, folder_role), whatever its shares say, so a reader never edits, shares or runs. Python
cells run arbitrary code, so only a member (or admin) with runner and above may execute; creating,
importing and forking make a notebook the caller owns and could run, so they need a member too.

POLICIES names every endpoint of the app and, as `socket:<type>`, every command of the notebook
namespace (console/server/live/sockets.py). `check` applies a row: `enforce` (a before_request hook)
for each request before its handler, `authorize_command` for each socket command before its
handler. A request or command without a row (or one added per app with `classify`) is refused
(fail closed), and tests/access/test_access_matrix.py fails until it is classified. A row is
"public" or "<site role> <what>", the site role being the least the account needs:

    public                   anyone, no login (the handler itself decides, e.g. a link token)
    <site> login             any logged-in user of that site role; the handler narrows (listings, folders)
    <site> notebook:<role>   also <role> on the notebook (the URL's <notebook_id>, a command's notebook_id)
    <site> run:<role>        also at least <role> on the notebook of the URL's <run_id>
    <site> job:<role>        also at least <role> on the notebook of the URL's <job_id>
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from flask import Flask, current_app, g, has_app_context, request

from console.roles import ROLE_RANK, SITE_CAP, SITE_RANK, at_least, capped, site_at_least

POLICIES_KEY = "console.access_policies"
COMMAND_PREFIX = "socket:"

POLICIES: dict[str, str] = {
    "static": "public",
    "pages.index": "public",
    "pages.notebook": "public",
    "pages.login": "public",
    "publish.page": "public",
    "publish.link": "public",
    "api.health": "public",
    "auth.login": "public",
    "auth.logout": "public",
    "auth.me": "public",
    "auth.password": "reader login",
    "sharing.users": "reader login",
    # notebooks: a new notebook (created, imported, duplicated, forked) is the caller's own, so
    # one a reader could run; only members make them
    "api.notebooks.list": "reader login",
    # the workspace page's listings (owner, the caller's role, shared with me): the handler filters
    "api.workspace.listing": "reader login",
    "api.workspace.shared": "reader login",
    # search by name and cell text (console/server/api/search.py): the handler keeps what the caller may read
    "api.search.search": "reader login",
    "api.notebooks.create": "member login",
    "api.notebooks.get": "reader notebook:viewer",
    "api.notebooks.replace": "member notebook:editor",
    "api.notebooks.rename": "member notebook:editor",
    "api.notebooks.move": "member notebook:owner",
    "api.notebooks.duplicate": "member notebook:viewer",
    "api.notebooks.fork": "member notebook:viewer",
    "api.notebooks.delete": "member notebook:owner",
    "api.transfer.import": "member login",
    "api.transfer.export": "reader notebook:viewer",
    "api.environment.get": "reader notebook:viewer",  # the packages its %pip cells added (issue 31)
    "api.cells.add": "member notebook:editor",
    "api.cells.edit": "member notebook:editor",
    "api.cells.delete": "member notebook:editor",
    "api.cells.move": "member notebook:editor",
    # a cell's whole result as the notebook's shared kernel keeps it: those who may run it (a
    # viewer reads the stored first rows, as before sessions were shared, when it had no kernel)
    "api.results.page": "member notebook:runner",
    "api.results.download": "member notebook:runner",
    # completion and hover ask the notebook's kernel, which only a runner may use
    "api.complete.complete": "member notebook:runner",
    "api.complete.inspect": "member notebook:runner",
    # comments on cells (console/server/api/comments.py): whoever reads the notebook comments, replies,
    # resolves and reopens; changing a comment's text or deleting it is its author's (the handler)
    "api.comments.list": "reader notebook:viewer",
    "api.comments.create": "reader notebook:viewer",
    "api.comments.update": "reader notebook:viewer",
    "api.comments.delete": "reader notebook:viewer",
    # dashboards (console/server/api/dashboards.py): viewers read a notebook's dashboard, editors pin and
    # arrange; its Refresh is the run endpoint (runs.run, runners). Through a link: the handler checks the token
    "dashboards.page": "public",  # the single page; its data comes from the rows below
    "dashboards.get": "reader notebook:viewer",
    "dashboards.replace": "member notebook:editor",
    "dashboards.pin": "member notebook:editor",
    "dashboards.unpin": "member notebook:editor",
    "dashboards.link_page": "public",
    "dashboards.link": "public",
    "api.revisions.list": "reader notebook:viewer",
    "api.revisions.get": "reader notebook:viewer",
    "api.revisions.diff": "reader notebook:viewer",
    "api.revisions.restore": "member notebook:editor",
    "api.revisions.save": "member notebook:editor",  # name the current content as a version
    # clear outputs: deletes the cells' stored runs, which every viewer of the notebook sees
    "api.outputs.clear": "member notebook:editor",
    # folders: the handlers check the folder role (the path is in the body or the query)
    "api.folders.list": "reader login",
    "api.folders.create": "member login",
    "api.folders.delete": "member login",
    "api.folders.rename": "member login",
    "sharing.folder_shares": "member login",
    "sharing.folder_share_set": "member login",
    "sharing.folder_share_delete": "member login",
    # sharing and links
    "sharing.shares": "member notebook:owner",
    "sharing.share_set": "member notebook:owner",
    "sharing.share_delete": "member notebook:owner",
    "sharing.links": "member notebook:owner",
    "sharing.link_create": "member notebook:owner",
    "sharing.link_revoke": "member notebook:owner",
    # kernels and runs over HTTP (console/server/api/runs.py)
    "runs.run": "member notebook:runner",
    "runs.interrupt": "member notebook:runner",
    "runs.restart": "member notebook:runner",
    "runs.kernel": "reader notebook:viewer",
    "runs.notebook_runs": "reader notebook:viewer",
    "runs.get_run": "reader run:viewer",
    "runs.outputs": "reader run:viewer",
    "runs.log": "reader run:viewer",
    "runs.manifest": "reader run:viewer",  # what the run read and wrote: its notebook's viewers, as the run
    "runs.diff": "reader run:viewer",  # two runs side by side: the handler asks the same of the second run
    "runs.replay": "member run:runner",  # the recorded run's cell again, in the notebook's session
    # the lake's tables are the members' (as the data panel); each run listed is one the caller may view
    "runs.lineage": "member login",
    # jobs (console/server/jobs/jobs.py): a job's rows name a role on the job's notebook; it runs as its owner
    "jobs.page": "public",  # the single page; its data comes from the rows below
    "jobs.preview": "member login",  # the next firing times of a schedule being written
    "jobs.create": "member login",  # the handler asks the editor role on the body's notebook
    "jobs.list": "reader login",  # the handler keeps the jobs of notebooks the caller sees
    "jobs.notebook_jobs": "reader notebook:viewer",
    "jobs.params": "reader notebook:viewer",
    "jobs.get": "reader job:viewer",
    "jobs.update": "member job:editor",  # and the handler: the job's owner or the notebook's owner
    "jobs.delete": "member job:editor",
    "jobs.run": "member job:runner",
    "jobs.runs": "reader job:viewer",
    # the data panel (console/server/api/lake.py): members share the lake and write it from cells anyway
    "lake.catalog": "member login",
    "lake.table": "member login",
    "lake.files": "member login",
    "lake.upload": "member login",
    "lake.session_tables": "member notebook:runner",  # asks the notebook's kernel, as completion does
    "lake.session_variables": "member notebook:runner",  # the variable explorer asks the kernel too
    "lake.file_schema": "member notebook:runner",  # a listed file's columns; Parquet and Excel: asks the kernel
    # running sessions (console/server/api/running.py): the list shows a user the sessions of notebooks
    # they may run (admins: all); shutting one down is the notebook owner's
    "sessions.page": "public",  # the single page; its data comes from the rows below
    "sessions.list": "member login",
    "sessions.stop": "member notebook:owner",
    # the user docs (console/server/api/userdocs.py): whoever sees the workspace reads them
    "docs.page": "public",  # the page; its markdown comes from the row below
    "docs.markdown": "reader login",
    # the same over the socket (console/server/live/sockets.py); leaving a room needs only the login
    "socket:join": "reader notebook:viewer",
    "socket:leave": "reader login",
    "socket:watch_jobs": "reader login",  # the Jobs page; each jobs_changed is checked against its notebook
    "socket:run_cell": "member notebook:runner",
    "socket:run_all": "member notebook:runner",
    "socket:run_from": "member notebook:runner",
    "socket:interrupt": "member notebook:runner",
    "socket:restart": "member notebook:runner",
    # live co-editing (console/server/live/coedit.py): watching and presence need a view, typing an edit
    "socket:doc_sync": "reader notebook:viewer",
    "socket:awareness": "reader notebook:viewer",
    "socket:doc_update": "member notebook:editor",
}


class Policy(NamedTuple):
    """One row, parsed: site None for a public row; role None for a plain login row."""

    site: str | None
    kind: str  # public | login | notebook | run | job
    role: str | None


def parse_policy(policy: str) -> Policy:
    """The parts of a row; ValueError for one the enforcer does not know.

    A row whose notebook role is above what the site role may hold is refused too: it could never
    be met, and it would read as if readers could edit.
    """
    if policy == "public":
        return Policy(None, "public", None)
    site, _, what = policy.partition(" ")
    kind, _, role = what.partition(":")
    if site not in SITE_RANK:
        raise ValueError(f"access policy {policy!r} must start with a site role ({', '.join(SITE_RANK)})")
    if what == "login":
        return Policy(site, "login", None)
    if kind not in ("notebook", "run", "job") or role not in ROLE_RANK:
        raise ValueError(f"unknown access policy {policy!r}")
    if not at_least(SITE_CAP[site], role):  # type: ignore[index]
        raise ValueError(f"access policy {policy!r}: a {site} holds at most {SITE_CAP[site]}")  # type: ignore[index]
    return Policy(site, kind, role)


def command_key(command_type: str) -> str:
    """The policy table's row name of a socket command."""
    return COMMAND_PREFIX + command_type


def _api_error(status: int, message: str) -> Exception:
    from console.server.errors import ApiError

    return ApiError(status, message)


def _store() -> Any:
    from console.server.deps import get_store

    return get_store()


def _is_under(path: str, folder: str) -> bool:
    from console.store.paths import is_under

    return is_under(path, folder)


@dataclass
class Grants:
    """What one user holds, loaded once per request: folder and notebook shares, folders created."""

    user: Any
    notebook_roles: dict[str, str] = field(default_factory=dict)
    folder_roles: list[tuple[str, str]] = field(default_factory=list)

    @property
    def admin(self) -> bool:
        return site_role_of(self.user) == "admin"


def site_role_of(user: Any) -> str:
    """The account's site role; a record without one (an older caller's) counts as a reader, the least."""
    role = getattr(user, "site_role", None)
    return role if role in SITE_RANK else "reader"


def _best(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if ROLE_RANK[a] >= ROLE_RANK[b] else b


def grants_of(store: Any, user: Any) -> Grants:
    # Per request; a kernel's include (console/server/sessions/includes.py) asks outside any request.
    cache = g.setdefault("console_grants", {}) if has_app_context() else {}
    if user.id in cache:
        return cache[user.id]
    gr = Grants(user)
    for share in store.list_shares(user_id=user.id):
        if share.notebook_id is not None:
            have = gr.notebook_roles.get(share.notebook_id)
            gr.notebook_roles[share.notebook_id] = _best(have, share.role) or share.role
        elif share.folder_path is not None:
            gr.folder_roles.append((share.folder_path, share.role))
    gr.folder_roles += [(path, "owner") for path in store.owned_folders(user.id)]
    cache[user.id] = gr
    return gr


def folder_role(store: Any, user: Any, path: str) -> str | None:
    """The strongest role `user` has on folder `path` (inherited from folders above it)."""
    if user is None:
        return None
    gr = grants_of(store, user)
    if gr.admin:
        return "owner"
    best: str | None = None
    for folder, role in gr.folder_roles:
        if _is_under(path, folder):
            best = _best(best, role)
    return capped(site_role_of(user), best)


def role_of(store: Any, user: Any, notebook: Any) -> str | None:
    """The strongest role `user` has on `notebook` (a NotebookInfo), or None."""
    if user is None:
        return None
    gr = grants_of(store, user)
    if gr.admin:
        return "owner"
    # A reader's own notebooks (made while it was a member) count as viewer too: owning one must
    # not let it run code its site role forbids.
    own = "owner" if notebook.owner_id == user.id else None
    shared = _best(gr.notebook_roles.get(notebook.id), folder_role(store, user, notebook.folder))
    return capped(site_role_of(user), _best(own, shared))


def can(user: Any, notebook: Any, role: str, store: Any = None) -> bool:
    return at_least(role_of(store if store is not None else _store(), user, notebook), role)


def require(notebook_id: str, role: str) -> tuple[Any, Any]:
    """(user, notebook) when the current user has `role`; 401 anonymous, 404 no role at all, 403 too weak."""
    from console.server import auth
    from console.store import NotFound

    store = _store()
    user = auth.current_user()
    if user is None:
        raise _api_error(401, "log in first")
    nb = store.get_notebook_info(notebook_id)  # NotFound -> 404
    have = role_of(store, user, nb)
    if have is None:
        raise NotFound(f"no notebook {notebook_id!r}")  # the same answer as for an id that does not exist
    if not at_least(have, role):
        raise _api_error(403, f"you need the {role} role on this notebook (you are {have})")
    return user, nb


def require_folder(path: str, role: str) -> Any:
    """The current user when they have `role` on folder `path`; 403 otherwise."""
    from console.server import auth
    from console.store import normalize_folder

    user = auth.current_user()
    if user is None:
        raise _api_error(401, "log in first")
    path = normalize_folder(path)
    if not at_least(folder_role(_store(), user, path), role):
        raise _api_error(403, f"you need the {role} role on folder {path}")
    return user


def place(folder: Any) -> str:
    """Check that the current user may put a notebook or folder at `folder`; returns it normalized.

    Allowed: the root (a notebook there is private to its owner), a folder the user edits, or a
    new folder whose nearest existing ancestor is the root or one the user edits. A new folder is
    created owned by the user, so they keep the owner role on what they put there.
    """
    from console.server import auth
    from console.store import Exists, normalize_folder
    from console.store.paths import parent_of

    store, user = _store(), auth.current_user()
    if user is None:
        raise _api_error(401, "log in first")
    folder = normalize_folder(folder)
    if folder == "/" or at_least(folder_role(store, user, folder), "editor"):
        return folder
    if store.folder_exists(folder):
        raise _api_error(403, f"you need the editor role on folder {folder}")
    top = folder
    while parent_of(top) != "/" and not store.folder_exists(parent_of(top)):
        top = parent_of(top)
    parent = parent_of(top)
    if parent != "/" and not at_least(folder_role(store, user, parent), "editor"):
        raise _api_error(403, f"you need the editor role on folder {parent}")
    if site_role_of(user) != "admin":
        try:
            store.create_folder(top, owner_id=user.id)
        except Exists:  # made meanwhile by someone else: check again as an existing folder
            if not at_least(folder_role(store, user, folder), "editor"):
                raise _api_error(403, f"you need the editor role on folder {folder}") from None
        g.pop("console_grants", None)
    return folder


def visible_listing(folder: Any) -> tuple[str, list[str], list[Any]]:
    """(folder, direct subfolders, notebooks) of `folder` that the current user may see."""
    from console.server import auth
    from console.store import normalize_folder

    store, user = _store(), auth.current_user()
    folder = normalize_folder(folder)
    if user is None:
        raise _api_error(401, "log in first")
    if grants_of(store, user).admin:
        listing = store.list_folder(folder)
        return listing.path, listing.folders, listing.notebooks
    subs, notebooks = listing_of(store, user, folder, lambda nb: role_of(store, user, nb) is not None)
    return folder, subs, notebooks


def listing_of(store: Any, user: Any, folder: str, holds: Callable[[Any], bool]) -> tuple[list[str], list[Any]]:
    """(direct subfolders, notebooks) of `folder` for a user: the notebooks `holds` lets through,
    and the folders on the way to them or to a folder shared with the user."""
    from console.store.paths import child_of, parent_of

    seen: set[str] = set()
    notebooks = []
    for nb in store.notebooks_under(folder):
        if holds(nb):
            seen.add(nb.folder)
            if nb.folder == folder:
                notebooks.append(nb)
    roots = [path for path, _ in grants_of(store, user).folder_roles]
    for path in store.all_folder_paths():
        if any(_is_under(path, r) for r in roots):
            seen.add(path)
    seen.update(roots)
    marks: set[str] = set()
    for path in seen:
        while path != "/":
            marks.add(path)
            path = parent_of(path)
    subs = sorted({c for p in marks if (c := child_of(p, folder))})
    return subs, sorted(notebooks, key=lambda nb: (nb.name, nb.id))


def policy_of(key: str) -> str:
    """The row of an endpoint or a socket command on this app; 403 for one without a row."""
    policy = current_app.extensions[POLICIES_KEY].get(key)
    if policy is None:
        raise _api_error(403, f"{key} has no access policy (console/server/access.py POLICIES)")
    return policy


def check(policy: str, notebook_id: str | None = None, run_id: str | None = None, job_id: str | None = None) -> Any:
    """Apply a policy to the current user; returns the user (None for a public row)."""
    from console.server import auth

    if policy == "public":  # before any lookup: static files and pages must stay cheap
        return None
    try:
        row = parse_policy(policy)
    except ValueError:  # fail closed: a row nobody can read allows nothing
        raise _api_error(403, f"unknown access policy {policy!r} (console/server/access.py POLICIES)") from None
    user = auth.current_user()
    if user is None:
        raise _api_error(401, "log in first")
    have = site_role_of(user)
    if row.site is not None and not site_at_least(have, row.site):
        raise _api_error(403, f"you need the {row.site} site role for this (your account is a {have}: "
                              "readers only view what is shared with them)")
    if row.kind == "notebook":
        if notebook_id is None:
            raise _api_error(400, "which notebook? 'notebook_id' is missing")
        require(notebook_id, row.role or "viewer")
    elif row.kind == "run":
        if run_id is None:
            raise _api_error(400, "which run? 'run_id' is missing")
        require(_store().get_run(run_id).notebook_id, row.role or "viewer")
    elif row.kind == "job":
        if job_id is None:
            raise _api_error(400, "which job? 'job_id' is missing")
        require(_store().get_job(job_id).notebook_id, row.role or "viewer")
    return user


def enforce() -> None:
    """before_request: apply the endpoint's policy (unknown endpoints are refused)."""
    endpoint = request.endpoint
    if endpoint is None:  # no route matched: Flask answers 404/405 itself
        return
    args = request.view_args or {}
    check(policy_of(endpoint), notebook_id=args.get("notebook_id"), run_id=args.get("run_id"),
          job_id=args.get("job_id"))


def authorize_command(command_type: str, notebook_id: str | None) -> Any:
    """Apply a socket command's policy before its handler runs; returns the user."""
    return check(policy_of(command_key(command_type)), notebook_id=notebook_id)


def command_types(app: Flask) -> set[str]:
    """The socket commands the table has rows for on this app."""
    table = app.extensions[POLICIES_KEY]
    return {key[len(COMMAND_PREFIX):] for key in table if key.startswith(COMMAND_PREFIX)}


def valid_policy(policy: str) -> bool:
    try:
        parse_policy(policy)
    except ValueError:
        return False
    return True


def classify(app: Flask, key: str, policy: str) -> None:
    """Give an endpoint or socket command added outside this module (a plugin, a test route) its
    policy on this app."""
    parse_policy(policy)  # ValueError for a row the enforcer would not know
    app.extensions[POLICIES_KEY][key] = policy


def init_access(app: Flask) -> None:
    bad = {key: policy for key, policy in POLICIES.items() if not valid_policy(policy)}
    if bad:  # a row the enforcer cannot read: refuse to start rather than refuse at request time
        raise RuntimeError(f"access policies the enforcer does not know: {bad} (a row is 'public' or "
                           "'<reader|member|admin> login|notebook:<role>|run:<role>|job:<role>')")
    app.extensions[POLICIES_KEY] = dict(POLICIES)
    app.before_request(enforce)
