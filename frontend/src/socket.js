// The notebook's live channel: Socket.IO commands out, typed events in.
//
// Every (re)connect joins the notebook's room with what the page already holds (since / 
// metrics_since), so a dropped connection or a reload resumes without gaps or repeats.

import { io } from "socket.io-client";

export const EVENT_TYPES = ["output", "output_hidden", "metrics", "result", "error", "cell_status", "kernel_status"];

// onEvent(type, payload); onConnection(state) with "connected" | "disconnected" | "reconnecting".
export function connectNotebook({ namespace = "/", path = "/socket.io", notebookId, cursors, onEvent, onConnection }) {
  const socket = io(namespace, {
    path,
    // Websocket first: long-polling adds latency and, in the Python client, drops bursts.
    transports: ["websocket", "polling"],
    reconnectionDelayMax: 3000,
  });

  socket.on("connect", () => {
    onConnection?.("connected");
    socket.emit("join", { notebook_id: notebookId, ...cursors() });
  });
  socket.on("disconnect", () => onConnection?.("disconnected"));
  socket.io.on("reconnect_attempt", () => onConnection?.("reconnecting"));
  for (const type of EVENT_TYPES) socket.on(type, (payload) => onEvent(type, payload || {}));

  const send = (type, fields = {}) => socket.emit(type, { notebook_id: notebookId, ...fields });
  return {
    socket,
    runCell: (cellId) => send("run_cell", { cell_id: cellId }),
    runAll: () => send("run_all"),
    runFrom: (cellId) => send("run_from", { cell_id: cellId }),
    interrupt: () => send("interrupt"),
    restart: () => send("restart"),
    close: () => {
      if (socket.connected) send("leave");
      socket.close();
    },
    get connected() {
      return socket.connected;
    },
  };
}
