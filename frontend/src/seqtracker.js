// Which output chunks of which runs this page already holds. Pure (no DOM).
//
// The server numbers each run's chunks 1, 2, 3... without gaps. After a reload or a reconnect the
// page joins with since = {run_id: last_seq} and the server replays the rest; a chunk that arrives
// twice (live and in a replay) is dropped here, so the log never shows a line twice.

export class SeqTracker {
  constructor() {
    this.last = new Map(); // run_id -> highest seq accepted
    this.markers = new Map(); // run_id -> last_seq of the hidden-output marker accepted
  }

  // True when (run, seq) is new and the caller should render it.
  accept(runId, seq) {
    if (!runId || !seq) return true; // unnumbered (should not happen): render rather than lose
    const prev = this.last.get(runId) || 0;
    if (seq <= prev) return false;
    this.last.set(runId, seq);
    return true;
  }

  // A hidden-output marker (output_hidden, up to lastSeq). The run's first is new when it is past
  // every chunk held. A later one is new when it hides more than the marker held: it replaces the
  // tail after that marker (logmodel.js), and the server sends the whole tail after it again
  // (console/outputs/live.py), chunks the page holds included, so the cursor goes back to lastSeq
  // to take them. Without that, chunks that had left the tail stayed on a page watching live.
  acceptMarker(runId, lastSeq) {
    if (!runId || !lastSeq) return true;
    const marker = this.markers.get(runId);
    if (lastSeq <= (marker === undefined ? this.last.get(runId) || 0 : marker)) return false;
    this.markers.set(runId, lastSeq);
    this.last.set(runId, lastSeq);
    return true;
  }

  note(runId, seq) {
    if (runId && seq > (this.last.get(runId) || 0)) this.last.set(runId, seq);
  }

  forget(runId) {
    this.last.delete(runId);
    this.markers.delete(runId);
  }

  since() {
    return Object.fromEntries(this.last);
  }
}
