// The tab says what the notebook is doing, so a user who switched tabs during a long training
// knows when to come back (issue 34): the title and favicon show running / done / failed, and a
// browser notification says so when a run of NOTIFY_AFTER_MS or more ends while the tab is hidden
// (only when the user allowed notifications; the page never asks on its own, Run all does).

export const NOTIFY_AFTER_MS = 30000;
const BUSY = new Set(["queued", "running"]);
const FAILED = new Set(["error", "interrupted"]);
const END = new Set(["done", "error", "interrupted"]);
const MARKS = { running: "▶ ", done: "✓ ", failed: "✗ ", idle: "" };
const COLOURS = { running: "#2563eb", done: "#16a34a", failed: "#dc2626" };

function favicon(state) {
  const colour = COLOURS[state];
  if (!colour) return "data:,";
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="${colour}"/></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

export class RunSignal {
  constructor({ doc = document, now = () => Date.now(), notify = null } = {}) {
    this.doc = doc;
    this.now = now;
    this.notify = notify || ((title, body) => {
      if (typeof Notification !== "undefined" && Notification.permission === "granted") new Notification(title, { body });
    });
    this.name = "";
    this.state = "idle";
    this.busySince = null;
  }

  // Run all asks once, from the user's click (browsers refuse a request that no gesture made).
  askPermission() {
    if (typeof Notification !== "undefined" && Notification.permission === "default") {
      Notification.requestPermission().catch(() => {});
    }
  }

  setName(name) {
    this.name = name;
    this.draw();
  }

  // statuses: every cell's status now, in cell order; called by the page's clock (4 times a
  // second). A run shorter than a tick is never seen busy: the cells whose status changed to
  // an end since the last call say how it went.
  update(statuses) {
    const before = this.before || statuses;
    this.before = statuses;
    const busy = statuses.some((s) => BUSY.has(s));
    if (busy) {
      if (this.state !== "running") {
        this.busySince = this.now();
        this.ran = new Set();
        this.state = "running";
        this.draw();
      }
      statuses.forEach((s, i) => { if (BUSY.has(s)) this.ran.add(i); });
      return;
    }
    const ended = statuses.map((s, i) => i).filter((i) => statuses[i] !== before[i] && END.has(statuses[i]));
    if (this.state !== "running" && !ended.length) return;
    const ran = new Set([...(this.ran || []), ...ended]);
    const next = [...ran].some((i) => FAILED.has(statuses[i])) ? "failed" : "done";
    if (this.state === "running") this.ended(next);
    this.ran = null;
    this.state = next;
    this.draw();
  }

  // The tab came back into view: the word has been seen.
  seen() {
    if (this.state !== "running" && this.state !== "idle") {
      this.state = "idle";
      this.draw();
    }
  }

  ended(how) {
    const took = this.busySince === null ? 0 : this.now() - this.busySince;
    this.busySince = null;
    if (took >= NOTIFY_AFTER_MS && this.doc.hidden) {
      this.notify(`${how === "failed" ? "Failed" : "Done"}: ${this.name}`,
        `The run ended after ${Math.round(took / 1000)} s`);
    }
  }

  draw() {
    this.doc.title = `${MARKS[this.state]}${this.name} · MLSQL Console`;
    let link = this.doc.querySelector("link[rel=icon]");
    if (!link) {
      link = this.doc.createElement("link");
      link.rel = "icon";
      this.doc.head.append(link);
    }
    link.href = favicon(this.state);
    this.doc.documentElement.dataset.runState = this.state;
  }
}
