"""Logins: cookie flags, CSRF on requests and sockets, logout revokes, throttling, single-user mode."""
from __future__ import annotations

from http.cookies import SimpleCookie

from flask import Flask

from console.config import Config
from console.roles import served as served_roles, served_site as served_site_roles
from security_support import PASSWORD, login, make_app


def _cookies(resp) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Set-Cookie headers by cookie name (the raw header, flags included)."""
    out = {}
    for header in resp.headers.getlist("Set-Cookie"):
        name = header.split("=", 1)[0]
        out[name] = header
    return out


def test_login_sets_httponly_samesite_cookies(mu_app: Flask) -> None:
    r = mu_app.test_client().post("/api/login", json={"username": "alice", "password": PASSWORD})
    assert r.status_code == 200 and r.json["user"]["username"] == "alice"
    cookies = _cookies(r)
    session = cookies["console_session"]
    assert "HttpOnly" in session and "SameSite=Lax" in session and "Path=/" in session
    assert "Secure" not in session  # plain http on 127.0.0.1
    csrf = cookies["csrf_token"]
    assert "HttpOnly" not in csrf and "SameSite=Strict" in csrf
    assert SimpleCookie(csrf)["csrf_token"].value == r.json["csrf_token"]


def test_cookies_are_secure_over_https(mu_app: Flask) -> None:
    client = mu_app.test_client()
    r = client.post("/api/login", json={"username": "alice", "password": PASSWORD}, base_url="https://localhost")
    assert r.status_code == 200
    assert all("Secure" in c for c in _cookies(r).values())


def test_wrong_password_and_unknown_user_look_the_same(mu_app: Flask) -> None:
    client = mu_app.test_client()
    a = client.post("/api/login", json={"username": "alice", "password": "nope-nope"})
    b = client.post("/api/login", json={"username": "nobody", "password": "nope-nope"})
    assert a.status_code == b.status_code == 401 and a.json["error"] == b.json["error"]
    assert "console_session" not in _cookies(a)


def test_me_and_anonymous(mu_app: Flask) -> None:
    anon = mu_app.test_client()
    me = anon.get("/api/me").json
    assert {k: me[k] for k in ("user", "csrf_token", "single_user", "auth", "roles", "site_roles")} == {
        "user": None, "csrf_token": None, "single_user": False, "auth": "anonymous", "roles": served_roles(),
        "site_roles": served_site_roles()}
    assert anon.get("/api/notebooks").status_code == 401
    assert anon.post("/api/notebooks", json={"name": "x"}).status_code == 401
    page = anon.get("/notebooks/abc")
    assert page.status_code == 302 and page.headers["Location"].startswith("/login?next=")
    assert anon.get("/login").status_code == 200
    client = login(mu_app, "vera")
    me = client.get("/api/me").json
    assert me["user"]["username"] == "vera" and me["auth"] == "session" and me["csrf_token"] == client.csrf_token
    assert me["user"]["site_role"] == "member" and me["user"]["is_admin"] is False


def test_csrf_token_is_required_on_every_state_change(mu_app: Flask) -> None:
    client = login(mu_app, "alice")
    token = client.environ_base.pop("HTTP_X_CSRF_TOKEN")
    assert client.post("/api/notebooks", json={"name": "x"}).status_code == 403
    bad = client.post("/api/notebooks", json={"name": "x"}, headers={"X-CSRF-Token": "forged"})
    assert bad.status_code == 403 and "CSRF" in bad.json["error"]
    assert client.post("/api/logout").status_code == 403
    ok = client.post("/api/notebooks", json={"name": "x"}, headers={"X-CSRF-Token": token})
    assert ok.status_code == 201
    nb = ok.json["id"]
    assert client.delete(f"/api/notebooks/{nb}").status_code == 403
    assert client.put(f"/api/notebooks/{nb}", json={"base_revision": 1, "cells": []}).status_code == 403
    assert client.get(f"/api/notebooks/{nb}").status_code == 200  # reads need no token


def test_cross_site_requests_are_refused(mu_app: Flask) -> None:
    client = login(mu_app, "alice")
    evil = client.post("/api/notebooks", json={"name": "x"}, headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403
    fetch = client.post("/api/notebooks", json={"name": "x"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetch.status_code == 403
    same = client.post("/api/notebooks", json={"name": "x"}, headers={"Origin": "http://localhost"})
    assert same.status_code == 201
    # Login CSRF: a cross-site form must not log the victim into the attacker's account.
    anon = mu_app.test_client()
    r = anon.post("/api/login", json={"username": "alice", "password": PASSWORD}, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403


def test_logout_revokes_the_session(mu_app: Flask) -> None:
    client = login(mu_app, "alice")
    stolen = client.get_cookie("console_session").value  # type: ignore[union-attr]
    assert client.post("/api/logout").status_code == 204
    assert client.get("/api/notebooks").status_code == 401
    replay = mu_app.test_client()
    replay.set_cookie("console_session", stolen)
    assert replay.get("/api/notebooks").status_code == 401


def test_password_change_ends_other_logins(mu_app: Flask) -> None:
    laptop, phone = login(mu_app, "alice"), login(mu_app, "alice")
    r = laptop.post("/api/me/password", json={"old_password": PASSWORD, "new_password": "short"})
    assert r.status_code == 400
    r = laptop.post("/api/me/password", json={"old_password": "wrong-wrong", "new_password": "a new password"})
    assert r.status_code == 403
    r = laptop.post("/api/me/password", json={"old_password": PASSWORD, "new_password": "a new password"})
    assert r.status_code == 200
    laptop.environ_base["HTTP_X_CSRF_TOKEN"] = r.json["csrf_token"]
    assert laptop.get("/api/notebooks").status_code == 200
    assert phone.get("/api/notebooks").status_code == 401
    login(mu_app, "alice", "a new password")


def test_failed_logins_lock_out_per_user_and_address(mu_app: Flask) -> None:
    client = mu_app.test_client()
    for _ in range(4):
        assert client.post("/api/login", json={"username": "alice", "password": "wrong-wrong"}).status_code == 401
    fifth = client.post("/api/login", json={"username": "alice", "password": "wrong-wrong"})
    assert fifth.status_code == 401
    locked = client.post("/api/login", json={"username": "alice", "password": PASSWORD})
    assert locked.status_code == 429 and locked.json["retry_after"] >= 29
    # Another address is not locked out by this one's guesses, nor is another user.
    other = mu_app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.1.2.3"
    assert other.post("/api/login", json={"username": "alice", "password": PASSWORD}).status_code == 200
    assert client.post("/api/login", json={"username": "vera", "password": PASSWORD}).status_code == 200
    # The window grows with each further failure once it has passed.
    store = mu_app.extensions["store"]
    failures, until = store.login_lock("alice", "127.0.0.1")
    assert failures == 5 and until is not None


def test_lock_window_grows() -> None:
    from console.server.auth import LOCK_MAX_SECONDS, _lock_seconds

    assert [_lock_seconds(n) for n in (1, 4, 5, 6, 7)] == [0, 0, 30, 60, 120]
    assert _lock_seconds(50) == LOCK_MAX_SECONDS


def test_single_user_mode_only_on_loopback(cfg: Config) -> None:
    app = make_app(cfg, SINGLE_USER=True)
    client = app.test_client()
    me = client.get("/api/me").json
    assert me["single_user"] is True and me["user"]["username"] == "admin" and me["auth"] == "single_user"
    assert client.post("/api/notebooks", json={"name": "x"}).status_code == 201
    # Cross-site browser requests are still refused; DNS rebinding (a foreign Host) is anonymous.
    evil = {"Origin": "http://evil.example"}
    assert client.post("/api/notebooks", json={"name": "x"}, headers=evil).status_code == 403
    assert client.get("/api/notebooks", headers={"Host": "evil.example"}).status_code == 401
    app.extensions["store"].close()
    public = make_app(load_other(cfg), SINGLE_USER=True, HOST="0.0.0.0")
    me = public.test_client().get("/api/me").json
    assert me["single_user"] is False and me["user"] is None
    public.extensions["store"].close()


def load_other(cfg: Config) -> Config:
    from console.config import load_config

    return load_config({"DATA_DIR": str(cfg.data_dir.parent / "other")})


def test_socket_connect_needs_the_csrf_token(mu_app: Flask) -> None:
    socketio = mu_app.extensions["socketio"]
    client = login(mu_app, "alice")
    without = socketio.test_client(mu_app, flask_test_client=client)
    assert not without.is_connected()
    wrong = socketio.test_client(mu_app, flask_test_client=client, auth={"csrf": "forged"})
    assert not wrong.is_connected()
    anon = socketio.test_client(mu_app, flask_test_client=mu_app.test_client(), auth={"csrf": client.csrf_token})
    assert not anon.is_connected()
    ok = socketio.test_client(mu_app, flask_test_client=client, auth={"csrf": client.csrf_token})
    assert ok.is_connected()
    nb = client.post("/api/notebooks", json={"name": "s", "cells": [{"kind": "mlsql", "source": "x"}]}).json
    ack = ok.emit("command", {"type": "join", "notebook_id": nb["id"]}, callback=True)
    assert ack["ok"], ack
    # After logout the login's open sockets are dropped at once (console/server/live/membership.py).
    client.post("/api/logout")
    assert not ok.is_connected()
