"""Who is making the request: login sessions, passwords, CSRF, lockout, and single-user mode.

A login creates a row in `login_sessions`; the `console_session` cookie (HttpOnly, SameSite=Lax,
Secure over https) holds a random token whose SHA-256 is the row's id, so logout and password
changes revoke a cookie at once. Each session has a CSRF token, readable by the page from the
`csrf_token` cookie and from GET /api/me; every state-changing request made with a session cookie
must echo it in `X-CSRF-Token`, and a Socket.IO connection must send it in its auth payload.

Failed logins are limited twice: per user name and address (LOCK_AFTER, kept in the store), and
per address whatever the names (console/server/throttle.py); a wrong old password when changing
one's password counts as a failed login. After a login the page goes to `next` only when it is a
path on this site (`safe_next`); GET /login drops any other.

Single-user mode (SINGLE_USER, honoured only when HOST is a loopback address) makes every request
that reaches the server through a loopback Host name the local admin, without a login. Such
requests carry no cookie, so CSRF is refused by the Origin / Sec-Fetch-Site headers instead, and
a non-loopback Host header (DNS rebinding) is anonymous.

`current_user()` is the one indirection the rest of server/ calls.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, current_app, g, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.security import check_password_hash, generate_password_hash

from console.roles import served as served_roles, served_site as served_site_roles
from console.server.throttle import AddressThrottle, HashTimer
from console.server.validate import typed_body, body_as
from console.server.live.membership import disconnect_user, revoke as revoke_sockets
from console.store import LoginSessionRecord, NotFound, Store, UserRecord

log = logging.getLogger(__name__)

ADMIN_KEY = "console.admin_id"
THROTTLE_KEY = "console.login_throttle"
SINGLE_USER_KEY = "console.single_user"
ADMIN_NAME = "admin"
SESSION_COOKIE = "console_session"
CSRF_COOKIE = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SESSION_TTL = timedelta(days=7)      # idle time after which a login expires
TOUCH_EVERY = timedelta(minutes=5)   # how stale last_seen may get before a request writes it
LOCK_AFTER = 5                       # failures (per user name and address) before the first lock
LOCK_BASE_SECONDS = 30               # first lock; doubles with each further failure
LOCK_MAX_SECONDS = 15 * 60
MIN_PASSWORD = 8
MAX_PASSWORD = 1024  # longer is no safer, and every character is hashed by scrypt at each login
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def hash_password(password: str) -> str:
    return generate_password_hash(password)  # scrypt with a random salt (werkzeug's default)


def check_password(stored: str | None, password: str) -> bool:
    # Unknown users and users without a password take as long as a real check (no timing oracle)
    # but sleep instead of hashing, so made-up names cannot use up the CPU (throttle.py).
    if not stored:
        _HASH_TIME.pause()
        return False
    start = time.perf_counter()
    ok = check_password_hash(stored, password)
    _HASH_TIME.observe(time.perf_counter() - start)
    return ok


_DUMMY: list[str] = []


def _dummy_hash() -> str:
    if not _DUMMY:
        _DUMMY.append(generate_password_hash(secrets.token_hex(8)))
    return _DUMMY[0]


_HASH_TIME = HashTimer(lambda: check_password_hash(_dummy_hash(), secrets.token_hex(8)))


def check_new_password(password: Any) -> str:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise ValueError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise ValueError(f"a password has at most {MAX_PASSWORD} characters")
    return password


def _given_password(password: str, name: str) -> str:
    """A password from a request body: one past MAX_PASSWORD cannot be right, and is refused unhashed."""
    from console.server.errors import ApiError

    if len(password) > MAX_PASSWORD:
        raise ApiError(400, f"{name!r} has at most {MAX_PASSWORD} characters")
    return password


@typed_body("POST /api/login")
@dataclass
class Login:
    username: str
    password: str
    next: str = "/"  # where the page goes once logged in: a same-site path (safe_next)


@typed_body("POST /api/me/password")
@dataclass
class PasswordChange:
    old_password: str
    new_password: str
    username: str | None = None  # only your own: another name is refused before any check


def _token_id(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Identity:
    """The resolved caller: via is "session", "single_user" or "anonymous"."""

    user: UserRecord | None
    via: str
    session: LoginSessionRecord | None = None


def _store() -> Store:
    return current_app.extensions["store"]


def single_user_mode() -> bool:
    return bool(current_app.extensions.get(SINGLE_USER_KEY))


def _host_is_loopback() -> bool:
    hostname = urlsplit("//" + (request.host or "")).hostname or ""
    return hostname.lower() in LOOPBACK_HOSTS


def _resolve() -> Identity:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        store = _store()
        ls = store.get_login_session(_token_id(token))
        now = datetime.now(timezone.utc)
        if ls is not None and ls.revoked_at is None and ls.expires_at > now:
            try:
                user = store.get_user(ls.user_id)
            except NotFound:
                user = None
            if user is not None:
                if now - ls.last_seen_at > TOUCH_EVERY:
                    store.touch_login_session(ls.id, now + SESSION_TTL)
                return Identity(user, "session", ls)
    if single_user_mode() and _host_is_loopback():
        return Identity(_store().get_user(current_app.extensions[ADMIN_KEY]), "single_user")
    return Identity(None, "anonymous")


def identity() -> Identity:
    if "console_identity" not in g:
        g.console_identity = _resolve()
    return g.console_identity


def current_user() -> UserRecord | None:
    """The logged-in user (the local admin in single-user mode), or None for an anonymous caller."""
    return identity().user


def signed_in() -> UserRecord:
    """The current user, for a handler whose policy row (console/server/access.py) needs a login."""
    from console.server.errors import ApiError

    user = current_user()  # looked up through the module, so tests may swap it
    if user is None:
        raise ApiError(401, "log in first")
    return user


# --- CSRF -------------------------------------------------------------------------------------

def _cross_site() -> bool:
    """True when a browser says this request comes from another site (Origin, Sec-Fetch-Site)."""
    site = request.headers.get("Sec-Fetch-Site")
    if site in ("cross-site", "same-site"):
        return True
    origin = request.headers.get("Origin")
    if origin and origin != "null":
        parts = urlsplit(origin)
        return parts.netloc.lower() != (request.host or "").lower()
    return origin == "null"


def _token_ok(given: Any, session: LoginSessionRecord | None) -> bool:
    return (session is not None and isinstance(given, str) and bool(given)
            and hmac.compare_digest(given.encode(), session.csrf_token.encode()))


def csrf_protect() -> None:
    """before_request: a state-changing request must not be cross-site and, with a session, echo its token."""
    from console.server.errors import ApiError

    if request.method in SAFE_METHODS:
        return
    if _cross_site():
        raise ApiError(403, "cross-site request refused")
    ident = identity()
    if ident.via == "session" and not _token_ok(request.headers.get(CSRF_HEADER), ident.session):
        raise ApiError(403, f"CSRF token missing or wrong (send the {CSRF_HEADER} header from GET /api/me)")


def allow_socket(auth_data: Any) -> bool:
    """Socket.IO connect: a known user; with a session cookie, auth must carry {"csrf": token}."""
    if _cross_site():
        return False
    try:
        ident = identity()
        user = current_user()  # looked up through the module, so tests may swap it
    except Exception:  # no user, no socket
        return False
    if user is None:
        return False
    if ident.via == "session":
        given = auth_data.get("csrf") if isinstance(auth_data, dict) else None
        return _token_ok(given, ident.session)
    return True


# --- login, logout, me ------------------------------------------------------------------------

def _client_ip() -> str:
    # The direct peer: X-Forwarded-For is spoofable unless a proxy is configured to set it.
    return (request.remote_addr or "")[:64]


def _lock_seconds(failures: int) -> int:
    if failures < LOCK_AFTER:
        return 0
    return min(LOCK_BASE_SECONDS * 2 ** (failures - LOCK_AFTER), LOCK_MAX_SECONDS)


def _set_cookies(resp: Response, token: str, csrf: str) -> None:
    secure = request.is_secure
    max_age = int(SESSION_TTL.total_seconds())
    resp.set_cookie(SESSION_COOKIE, token, max_age=max_age, httponly=True, samesite="Lax", secure=secure, path="/")
    # Readable by the page's scripts (frontend/src/api.js sends it back as X-CSRF-Token).
    resp.set_cookie(CSRF_COOKIE, csrf, max_age=max_age, httponly=False, samesite="Strict", secure=secure, path="/")


def _clear_cookies(resp: Response) -> None:
    resp.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Lax", secure=request.is_secure)
    resp.delete_cookie(CSRF_COOKIE, path="/", samesite="Strict", secure=request.is_secure)


def _user_json(user: UserRecord | None) -> dict[str, Any] | None:
    if user is None:
        return None
    return {"id": user.id, "username": user.username, "display_name": user.display_name, "is_admin": user.is_admin,
            "site_role": user.site_role}


def login() -> ResponseReturnValue:
    from console.server.errors import ApiError

    spec = body_as(Login)
    username, password = spec.username, _given_password(spec.password, "password")
    next_path = safe_next(spec.next)
    store, ip = _store(), _client_ip()
    with _Attempt(ip):
        if not _password_ok(store, username, password, ip):
            raise ApiError(401, "wrong user name or password")
    now = datetime.now(timezone.utc)
    store.purge_login_sessions(now - timedelta(days=1))  # housekeeping: expired and revoked rows
    user = store.get_user_by_name(username)
    old = request.cookies.get(SESSION_COOKIE)
    if old:
        store.revoke_login_session(_token_id(old))
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    store.create_login_session(_token_id(token), user.id, csrf, now + SESSION_TTL, ip,
                               request.headers.get("User-Agent", ""))
    resp = jsonify({"user": _user_json(user), "csrf_token": csrf, "single_user": single_user_mode(),
                    "next": next_path})
    _set_cookies(resp, token, csrf)
    return resp


class _Attempt:
    """One password check from `ip`: refused with 429 while the address is throttled; counted as a
    failure for the address when the block raises a 401 or 403 (a wrong password)."""

    def __init__(self, ip: str) -> None:
        self.ip = ip

    def __enter__(self) -> None:
        from console.server.errors import ApiError

        wait = _throttle().begin(self.ip)
        if wait:
            log.warning("login attempts from %s refused for %d s: too many failures", self.ip, wait)
            raise ApiError(429, f"too many failed logins from this address; try again in {wait} s",
                           retry_after=wait)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        from console.server.errors import ApiError

        _throttle().end(self.ip, failed=isinstance(exc, ApiError) and exc.status in (401, 403))


def _throttle() -> AddressThrottle:
    throttle: AddressThrottle = current_app.extensions[THROTTLE_KEY]
    return throttle


def _password_ok(store: Store, username: str, password: str, ip: str) -> bool:
    """Check a password under the per-name lock: 429 while locked; a failure is counted and logged."""
    from console.server.errors import ApiError

    now = datetime.now(timezone.utc)
    failures, locked_until = store.login_lock(username, ip)
    if locked_until is not None and locked_until > now:
        wait = int((locked_until - now).total_seconds()) + 1
        raise ApiError(429, f"too many failed logins; try again in {wait} s", retry_after=wait)
    if not check_password(store.password_hash(username), password):
        count = failures + 1
        lock = _lock_seconds(count)
        store.record_login_failure(username, ip, now + timedelta(seconds=lock) if lock else None)
        log.warning("failed login for %r from %s (%d in a row)", username, ip, count)
        return False
    if failures:
        store.clear_login_failures(username, ip)
    return True


# Browsers drop tabs and newlines inside a URL and read a backslash as a slash.
_UNSAFE_NEXT = re.compile(r"[\x00-\x1f\x7f\\]")


def safe_next(value: Any) -> str:
    """`value` when it is a path on this site, else "/".

    "/<tab>/evil.example" and "/<backslash>evil.example" are other sites to a browser, as are
    "//evil.example" and "https:evil.example".
    """
    if not isinstance(value, str) or not value.startswith("/") or value.startswith("//") or _UNSAFE_NEXT.search(value):
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return "/"
    return value


def logout() -> ResponseReturnValue:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        _store().revoke_login_session(_token_id(token))
        revoke_sockets(session_id=_token_id(token))  # its open sockets leave every notebook room now
    resp = Response(status=204)
    _clear_cookies(resp)
    return resp


def me() -> ResponseReturnValue:
    ident = identity()
    return jsonify({
        "user": _user_json(ident.user),
        "csrf_token": ident.session.csrf_token if ident.session else None,
        "single_user": single_user_mode(),
        "auth": ident.via,
        "roles": served_roles(),  # the page's role list (console/roles.py), so it keeps no copy
        # Markdown cells show images from other sites only when the server allows it (pages.page_csp).
        "markdown_remote_images": bool(current_app.extensions["config"].MARKDOWN_REMOTE_IMAGES),
        "site_roles": served_site_roles(),  # the same for accounts: reader, member, admin
    })


def change_password() -> ResponseReturnValue:
    """POST /api/me/password {old_password, new_password}: other logins of the user are revoked.

    Only one's own password: a `username` naming anyone else is refused before any check (an
    admin resets another account's password with `mlsql-console users passwd NAME`).
    """
    from console.server.errors import ApiError

    spec = body_as(PasswordChange)
    ident = identity()
    if ident.user is None or ident.via != "session":
        raise ApiError(401, "log in first (in single-user mode set a password with: mlsql-console users passwd "
                            f"{ident.user.username if ident.user else ADMIN_NAME})")
    named = spec.username
    if named is not None and named != ident.user.username:
        raise ApiError(403, f"you may change only your own password (you are {ident.user.username}); "
                            f"an admin resets others' with: mlsql-console users passwd {named}")
    store, ip = _store(), _client_ip()
    old_password = _given_password(spec.old_password, "old_password")
    # A wrong old password is a failed login: a borrowed session must not let anyone guess it freely.
    with _Attempt(ip):
        if not _password_ok(store, ident.user.username, old_password, ip):
            raise ApiError(403, "the old password is wrong")
    try:
        new = check_new_password(spec.new_password)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from exc
    store.set_password(ident.user.id, hash_password(new))
    store.revoke_user_sessions(ident.user.id)
    disconnect_user(ident.user.id, keep_session=ident.session.id if ident.session else None)  # other logins' sockets
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    store.create_login_session(_token_id(token), ident.user.id, csrf, datetime.now(timezone.utc) + SESSION_TTL,
                               _client_ip(), request.headers.get("User-Agent", ""))
    resp = jsonify({"user": _user_json(ident.user), "csrf_token": csrf})
    _set_cookies(resp, token, csrf)
    return resp


def create_blueprint() -> Blueprint:
    bp = Blueprint("auth", __name__, url_prefix="/api")
    bp.add_url_rule("/login", "login", login, methods=["POST"])
    bp.add_url_rule("/logout", "logout", logout, methods=["POST"])
    bp.add_url_rule("/me", "me", me, methods=["GET"])
    bp.add_url_rule("/me/password", "password", change_password, methods=["POST"])
    return bp


def _security_headers(resp: Response) -> Response:
    # JSON must never be sniffed into HTML; page URLs (which may hold a link token) stay on this site.
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "same-origin")
    return resp


def init_auth(app: Flask, store: Store) -> None:
    """Create the local admin, decide single-user mode, add the CSRF check and the login endpoints."""
    cfg = app.extensions["config"]
    admin = store.ensure_user(ADMIN_NAME, display_name="Local admin", is_admin=True)
    app.extensions[ADMIN_KEY] = admin.id
    single = bool(cfg.SINGLE_USER)
    if single and str(cfg.HOST).strip("[]").lower() not in LOOPBACK_HOSTS:
        log.warning("SINGLE_USER ignored: HOST is %s, not a loopback address; everyone must log in", cfg.HOST)
        single = False
    elif single:
        log.warning("single-user mode: no login; every request through %s is the local admin", cfg.HOST)
    app.extensions[SINGLE_USER_KEY] = single
    app.extensions[THROTTLE_KEY] = AddressThrottle()
    app.before_request(csrf_protect)
    app.after_request(_security_headers)
    app.register_blueprint(create_blueprint())
