// The find bar's marks inside one cell's editor (findbar.js): every match of the cell, and the
// current one apart, as CodeMirror decorations; the marks follow edits until the bar sets new ones.

import { StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView } from "@codemirror/view";

// value: {ranges: [{from, to}], current: index into ranges or -1}
export const setFindMarks = StateEffect.define();

const match = Decoration.mark({ class: "cm-find-match" });
const current = Decoration.mark({ class: "cm-find-match cm-find-current", attributes: { "data-role": "find-current" } });

export const findMarks = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) {
      if (!e.is(setFindMarks)) continue;
      const len = tr.state.doc.length;
      const { ranges, current: at } = e.value;
      return Decoration.set(ranges.filter((r) => r.to <= len && r.from < r.to)
        .map((r, i) => (i === at ? current : match).range(r.from, r.to)), true);
    }
    return deco.map(tr.changes);
  },
  provide: (f) => EditorView.decorations.from(f),
});

// Mark `ranges` in `view`; scroll: bring the current one into view (the page scrolls with it).
export function showFindMarks(view, ranges, at, scroll) {
  const effects = [setFindMarks.of({ ranges, current: at })];
  if (scroll && at >= 0 && ranges[at]) effects.push(EditorView.scrollIntoView(ranges[at].from, { y: "center" }));
  view.dispatch({ effects });
}
