// Which output chunks of which runs this page already holds. Pure (no DOM).
//
// The server numbers each run's chunks 1, 2, 3... without gaps. After a reload or a reconnect the
// page joins with since = {run_id: last_seq} and the server replays the rest; a chunk that arrives
// twice (live and in a replay) is dropped here, so the log never shows a line twice.

export class SeqTracker {
  constructor() {
    this.last = new Map(); // run_id -> highest seq accepted
  }

  // True when (run, seq) is new and the caller should render it.
  accept(runId, seq) {
    if (!runId || !seq) return true; // unnumbered (should not happen): render rather than lose
    const prev = this.last.get(runId) || 0;
    if (seq <= prev) return false;
    this.last.set(runId, seq);
    return true;
  }

  note(runId, seq) {
    if (runId && seq > (this.last.get(runId) || 0)) this.last.set(runId, seq);
  }

  forget(runId) {
    this.last.delete(runId);
  }

  since() {
    return Object.fromEntries(this.last);
  }
}
