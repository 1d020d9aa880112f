"""The server's live wing: the Socket.IO namespace, who is in which notebook room, and co-editing
(the Yjs document as a pure module, its room and saver, the revision settler)."""
