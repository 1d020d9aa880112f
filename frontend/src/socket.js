// The notebook's live channel: Socket.IO commands out, typed events in.
//
// Every (re)connect joins the notebook's room with what the page already holds (since / 
// metrics_since), so a dropped connection or a reload resumes without gaps or repeats.

import { io } from "socket.io-client";
import { csrfToken } from "./api.js";
import { COMMAND, EVENT } from "./wire-names.js";

// onEvent(type, payload); onConnection(state): "connected" | "live" | "disconnected" | "reconnecting";
// onRefused({type, status, error}) when the server answers a command with ok: false.
//
// Wire (console/server/live/sockets.py): the browser emits "command" with a to_wire() dict of a
// *Command (its `type` says which) and gets an ack {ok, ...}; the server emits "event" with a
// to_wire() dict of an *Event, switched on its `type`.
// onJoined(): after each join, before "live" (the shared document syncs there; coedit.js).
export function connectNotebook({ namespace = "/", path = "/socket.io", notebookId, cursors, onEvent, onConnection, onRefused, onJoined }) {
  const socket = io(namespace, {
    path,
    // Websocket first: long-polling adds latency and, in the Python client, drops bursts.
    transports: ["websocket", "polling"],
    reconnectionDelayMax: 3000,
    // A logged-in page proves it is itself (not another site) with the login's CSRF token.
    auth: (cb) => cb({ csrf: csrfToken() }),
  });

  // quiet: the caller handles a refusal itself (a co-editing command answered 409 resyncs), or
  // quiet(ack): whether it handles this one.
  const send = (type, fields = {}, quiet = false) => new Promise((resolve) => {
    socket.emit("command", { type, notebook_id: notebookId, ...fields }, (ack) => {
      if (ack && ack.ok === false && !(typeof quiet === "function" ? quiet(ack) : quiet)) onRefused?.({ type, ...ack });
      resolve(ack || {});
    });
  });

  const staleRun = (ack) => ack.status === 409 && Array.isArray(ack.stale);

  // "connected" when the socket is up, "live" once the join (and its replay) is acknowledged.
  socket.on("connect", () => {
    onConnection?.("connected");
    send(COMMAND.JOIN, cursors()).then(async (ack) => {
      if (ack.ok === false) return;
      if (onJoined) await onJoined();
      onConnection?.("live");
    });
  });
  socket.on("disconnect", () => onConnection?.("disconnected"));
  socket.io.on("reconnect_attempt", () => onConnection?.("reconnecting"));
  socket.on("event", (ev) => ev && onEvent(ev.type, ev));

  return {
    socket,
    send: (type, fields) => send(type, fields, type === COMMAND.DOC_UPDATE),
    // sources: {cellId: sourceDigest} of the cells run, as shown (coedit.js); retry: a refusal for
    // stale sources is the caller's to handle (it syncs and sends the run again).
    // params: the parameter form's values (jobs.js), or none: the cells as written.
    runCell: (cellId, sources, retry, params) => send(COMMAND.RUN_CELL, withParams({ cell_id: cellId, sources }, params),
      retry && staleRun),
    runAll: (sources, retry, params) => send(COMMAND.RUN_ALL, withParams({ sources }, params), retry && staleRun),
    runFrom: (cellId, sources, retry, params) => send(COMMAND.RUN_FROM, withParams({ cell_id: cellId, sources }, params),
      retry && staleRun),
    interrupt: () => send(COMMAND.INTERRUPT),
    restart: () => send(COMMAND.RESTART),
    close: () => {
      if (socket.connected) send(COMMAND.LEAVE);
      socket.close();
    },
    get connected() {
      return socket.connected;
    },
  };
}

function withParams(fields, params) {
  return params && Object.keys(params).length ? { ...fields, params } : fields;
}

// The Jobs page's live channel: on every (re)connect it sends watch_jobs, then onWatching(); each
// jobs_changed the server sends (only for jobs of notebooks this user may view: live/jobwatch.py)
// calls onChanged(event). `watching`: connected and acknowledged, so nothing needs polling.
export function connectJobs({ path = "/socket.io", onChanged, onWatching, onLost }) {
  const socket = io("/", {
    path,
    transports: ["websocket", "polling"],
    reconnectionDelayMax: 3000,
    auth: (cb) => cb({ csrf: csrfToken() }),
  });
  let watching = false;
  socket.on("connect", () => {
    socket.emit("command", { type: COMMAND.WATCH_JOBS }, (ack) => {
      watching = Boolean(ack && ack.ok);
      if (watching) onWatching?.();
    });
  });
  socket.on("disconnect", () => {
    watching = false;
    onLost?.();
  });
  socket.on("event", (ev) => {
    if (ev && ev.type === EVENT.JOBS_CHANGED) onChanged(ev);
  });
  return {
    socket,
    close: () => socket.close(),
    get watching() {
      return watching && socket.connected;
    },
  };
}
