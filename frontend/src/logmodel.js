// The live log of one cell run as a list of lines, with terminal-style redraws applied.
// Pure (no DOM): the view asks it what changed since the last frame and redraws only that.
//
// Each source+stream (driver, each Ray actor) has its own "open" line, the one its next text
// continues. A `\r` clears that open line and `\b` erases one character, so a Keras progress bar
// keeps rewriting one line even while other actors print lines around it. This matches the
// server's wire rule (console/outputs/collapse.py): a chunk may start with `\r`, meaning
// "replace the unfinished last line of this source+stream", and its `terminal()` reference.

// CSI sequences (colours, cursor moves) and OSC titles; we show plain text.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function stripAnsi(text) {
  return text.indexOf("\x1b") === -1 ? text : text.replace(ANSI, "");
}

// Apply `\r` (clear the line) and `\b` (erase one character) to a line being written.
export function applyControl(line, piece) {
  if (piece.indexOf("\r") === -1 && piece.indexOf("\b") === -1) return line + piece;
  let text = line;
  let start = 0;
  for (let i = 0; i < piece.length; i++) {
    const ch = piece.charCodeAt(i);
    if (ch !== 13 && ch !== 8) continue;
    text += piece.slice(start, i);
    text = ch === 13 ? "" : text.slice(0, -1);
    start = i + 1;
  }
  return text + piece.slice(start);
}

export class LogModel {
  // maxLines bounds memory for runaway output; older lines are dropped and counted.
  constructor({ maxLines = 20000 } = {}) {
    this.maxLines = maxLines;
    this.lines = []; // {source, stream, text} or a hidden-output marker {hidden: {bytes, url}}
    this.first = 0; // absolute index of lines[0]
    this.dropped = 0; // lines dropped from the front
    this.hiddenBytes = 0; // output the server kept out of the inline copy
    this.hiddenUrl = "";
    this.marker = -1; // absolute index of the hidden-output marker line, -1 when none
    this.cut = false; // lines after the marker were removed: the view redraws in full
    this.open = new Map(); // "source\0stream" -> absolute index of its unfinished line
    this.sources = new Set();
    this.dirty = new Set(); // absolute indexes of lines edited in place
  }

  get end() {
    return this.first + this.lines.length;
  }

  line(abs) {
    return this.lines[abs - this.first];
  }

  clear() {
    this.lines = [];
    this.first = 0;
    this.dropped = 0;
    this.hiddenBytes = 0;
    this.hiddenUrl = "";
    this.marker = -1;
    this.cut = false;
    this.open.clear();
    this.sources.clear();
    this.dirty.clear();
  }

  // Add text printed by one source; text may hold many lines, partial lines, \r and \b.
  append(text, source = "driver", stream = "stdout") {
    if (!text) return;
    const clean = stripAnsi(text).replace(/\r\n/g, "\n");
    this.sources.add(source);
    const parts = clean.split("\n");
    for (let i = 0; i < parts.length; i++) {
      const piece = parts[i];
      const last = i === parts.length - 1;
      if (last && piece === "") break; // text ended with a newline: nothing is open
      this._write(piece, source, stream);
      if (!last) this.open.delete(`${source}\u0000${stream}`);
    }
    this._trim();
  }

  _write(piece, source, stream) {
    const key = `${source}\u0000${stream}`;
    let index = this.open.get(key);
    if (index === undefined || index < this.first) {
      // A bare "\r" chunk with no open line (its line was trimmed away) starts a fresh one.
      this.lines.push({ source, stream, text: "" });
      index = this.end - 1;
      this.open.set(key, index);
    } else {
      this.dirty.add(index);
    }
    const line = this.line(index);
    line.text = applyControl(line.text, piece);
  }

  // Output the server did not send inline (the middle of a huge log): one marker line.
  // A second marker of the same run (a live run past its budget, or a replay after a reconnect)
  // grows the first: `bytes` is then the run's whole hidden size, and the lines after the marker
  // (the previous tail, now part of the middle) are replaced by the tail that follows it.
  hidden(bytes, url) {
    this.hiddenUrl = url || this.hiddenUrl;
    if (this.marker >= this.first) {
      const at = this.marker - this.first;
      this.lines.length = at + 1;
      this.lines[at].hidden = { bytes, url: this.hiddenUrl };
      this.hiddenBytes = bytes;
      for (const [key, index] of this.open) if (index > this.marker) this.open.delete(key);
      for (const index of this.dirty) if (index > this.marker) this.dirty.delete(index);
      this.cut = true;
      return;
    }
    this.hiddenBytes += bytes;
    this.lines.push({ source: "", stream: "hidden", text: "", hidden: { bytes, url } });
    this.marker = this.end - 1;
    this._trim();
  }

  _trim() {
    const extra = this.lines.length - this.maxLines;
    if (extra <= 0) return;
    this.lines.splice(0, extra);
    this.first += extra;
    this.dropped += extra;
  }

  // Absolute indexes of lines edited in place since the last call (new lines are not included).
  takeDirty() {
    const out = this.dirty;
    this.dirty = new Set();
    return out;
  }
}
