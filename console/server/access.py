"""Who may do what: roles on notebooks and folders, and the one policy table of every HTTP
endpoint and every Socket.IO command.

Roles (console/roles.py) rank viewer < runner < editor < owner. A user's role on a notebook is
the strongest of: owning it, a share on it, a share on a folder at or above it, owning (having
created) such a folder; admins are owners of everything. Python cells run arbitrary code, so only
runner and above may execute.

POLICIES names every endpoint of the app and, as `socket:<type>`, every command of the notebook
namespace (console/server/sockets.py). `check` applies a row: `enforce` (a before_request hook)
for each request before its handler, `authorize_command` for each socket command before its
handler. A request or command without a row (or one added per app with `classify`) is refused
(fail closed), and tests/access/test_access_matrix.py fails until it is classified. Policies:

    public            anyone, no login (the handler itself decides, e.g. a link token)
    login             any logged-in user; the handler narrows (listings, folder checks)
    notebook:<role>   the notebook (the URL's <notebook_id>, a command's notebook_id) needs <role>
    run:<role>        the notebook of the URL's <run_id> needs at least <role>
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app, g, request

from console.roles import ROLE_RANK, at_least

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
    "auth.password": "login",
    "sharing.users": "login",
    # notebooks
    "api.notebooks.list": "login",
    "api.notebooks.create": "login",
    "api.notebooks.get": "notebook:viewer",
    "api.notebooks.replace": "notebook:editor",
    "api.notebooks.rename": "notebook:editor",
    "api.notebooks.move": "notebook:owner",
    "api.notebooks.duplicate": "notebook:viewer",
    "api.notebooks.fork": "notebook:viewer",
    "api.notebooks.delete": "notebook:owner",
    "api.transfer.import": "login",
    "api.transfer.export": "notebook:viewer",
    "api.cells.add": "notebook:editor",
    "api.cells.edit": "notebook:editor",
    "api.cells.delete": "notebook:editor",
    "api.cells.move": "notebook:editor",
    "api.revisions.list": "notebook:viewer",
    "api.revisions.get": "notebook:viewer",
    "api.revisions.diff": "notebook:viewer",
    "api.revisions.restore": "notebook:editor",
    # folders: the handlers check the folder role (the path is in the body or the query)
    "api.folders.list": "login",
    "api.folders.create": "login",
    "api.folders.delete": "login",
    "api.folders.rename": "login",
    "sharing.folder_shares": "login",
    "sharing.folder_share_set": "login",
    "sharing.folder_share_delete": "login",
    # sharing and links
    "sharing.shares": "notebook:owner",
    "sharing.share_set": "notebook:owner",
    "sharing.share_delete": "notebook:owner",
    "sharing.links": "notebook:owner",
    "sharing.link_create": "notebook:owner",
    "sharing.link_revoke": "notebook:owner",
    # kernels and runs over HTTP (console/server/runs.py)
    "runs.run": "notebook:runner",
    "runs.interrupt": "notebook:runner",
    "runs.restart": "notebook:runner",
    "runs.kernel": "notebook:viewer",
    "runs.notebook_runs": "notebook:viewer",
    "runs.get_run": "run:viewer",
    "runs.outputs": "run:viewer",
    "runs.log": "run:viewer",
    # the same over the socket (console/server/sockets.py); leaving a room needs only the login
    "socket:join": "notebook:viewer",
    "socket:leave": "login",
    "socket:run_cell": "notebook:runner",
    "socket:run_all": "notebook:runner",
    "socket:run_from": "notebook:runner",
    "socket:interrupt": "notebook:runner",
    "socket:restart": "notebook:runner",
}


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
        return bool(getattr(self.user, "is_admin", False))


def _best(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if ROLE_RANK[a] >= ROLE_RANK[b] else b


def grants_of(store: Any, user: Any) -> Grants:
    cache = g.setdefault("console_grants", {})
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
    return best


def role_of(store: Any, user: Any, notebook: Any) -> str | None:
    """The strongest role `user` has on `notebook` (a NotebookInfo), or None."""
    if user is None:
        return None
    gr = grants_of(store, user)
    if gr.admin or notebook.owner_id == user.id:
        return "owner"
    return _best(gr.notebook_roles.get(notebook.id), folder_role(store, user, notebook.folder))


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
    if not getattr(user, "is_admin", False):
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
    from console.store.paths import child_of, parent_of

    store, user = _store(), auth.current_user()
    folder = normalize_folder(folder)
    if user is None:
        raise _api_error(401, "log in first")
    if grants_of(store, user).admin:
        listing = store.list_folder(folder)
        return listing.path, listing.folders, listing.notebooks
    seen: set[str] = set()
    notebooks = []
    for nb in store.notebooks_under(folder):
        if role_of(store, user, nb) is not None:
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
    return folder, subs, sorted(notebooks, key=lambda nb: (nb.name, nb.id))


def policy_of(key: str) -> str:
    """The row of an endpoint or a socket command on this app; 403 for one without a row."""
    policy = current_app.extensions[POLICIES_KEY].get(key)
    if policy is None:
        raise _api_error(403, f"{key} has no access policy (console/server/access.py POLICIES)")
    return policy


def check(policy: str, notebook_id: str | None = None, run_id: str | None = None) -> Any:
    """Apply a policy to the current user; returns the user (None for a public row)."""
    from console.server import auth

    if policy == "public":  # before any lookup: static files and pages must stay cheap
        return None
    user = auth.current_user()
    if user is None:
        raise _api_error(401, "log in first")
    kind, _, role = policy.partition(":")
    if kind == "notebook":
        if notebook_id is None:
            raise _api_error(400, "which notebook? 'notebook_id' is missing")
        require(notebook_id, role)
    elif kind == "run":
        if run_id is None:
            raise _api_error(400, "which run? 'run_id' is missing")
        require(_store().get_run(run_id).notebook_id, role)
    return user


def enforce() -> None:
    """before_request: apply the endpoint's policy (unknown endpoints are refused)."""
    endpoint = request.endpoint
    if endpoint is None:  # no route matched: Flask answers 404/405 itself
        return
    args = request.view_args or {}
    check(policy_of(endpoint), notebook_id=args.get("notebook_id"), run_id=args.get("run_id"))


def authorize_command(command_type: str, notebook_id: str | None) -> Any:
    """Apply a socket command's policy before its handler runs; returns the user."""
    return check(policy_of(command_key(command_type)), notebook_id=notebook_id)


def command_types(app: Flask) -> set[str]:
    """The socket commands the table has rows for on this app."""
    table = app.extensions[POLICIES_KEY]
    return {key[len(COMMAND_PREFIX):] for key in table if key.startswith(COMMAND_PREFIX)}


def valid_policy(policy: str) -> bool:
    kind, _, role = policy.partition(":")
    return policy in ("public", "login") or (kind in ("notebook", "run") and role in ROLE_RANK)


def classify(app: Flask, key: str, policy: str) -> None:
    """Give an endpoint or socket command added outside this module (a plugin, a test route) its
    policy on this app."""
    if not valid_policy(policy):
        raise ValueError(f"unknown access policy {policy!r}")
    app.extensions[POLICIES_KEY][key] = policy


def init_access(app: Flask) -> None:
    app.extensions[POLICIES_KEY] = dict(POLICIES)
    app.before_request(enforce)
