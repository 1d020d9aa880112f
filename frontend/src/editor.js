// The code editor of one cell: CodeMirror 6 with MLSQL / Python / plain text, the `--%`
// annotation lines of Python cells marked, and the failing line of an error highlighted.

import { EditorState, StateEffect, StateField, Compartment, Prec, RangeSetBuilder } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, drawSelection, highlightActiveLine, Decoration, ViewPlugin,
  highlightSpecialChars, hoverTooltip, tooltips,
} from "@codemirror/view";
import {
  autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, completionStatus,
} from "@codemirror/autocomplete";
import {
  StreamLanguage, syntaxHighlighting, HighlightStyle, bracketMatching, indentOnInput, indentUnit,
} from "@codemirror/language";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { tags as t } from "@lezer/highlight";
import { mlsqlStream } from "./mlsql-lang.js";
import { completionSource, schemaOf, schemaText } from "./assist.js";
import { docNode } from "./doclinks.js";
import { findMarks, showFindMarks } from "./findmarks.js";
import { yCollab, yUndoManagerKeymap } from "y-codemirror.next";
import * as Y from "yjs";

// A cell bound to the shared document: its text is the cell's Y.Text (each keystroke becomes a
// Yjs update, everyone else's arrive the same way), undo is Yjs's (only this page's own edits),
// and the other people's cursors and selections are drawn with their names in their colours.
function collabExtension(binding) {
  if (!binding) return [];
  return [
    yCollab(binding.ytext, binding.awareness, { undoManager: new Y.UndoManager(binding.ytext) }),
    Prec.high(keymap.of(yUndoManagerKeymap)),
  ];
}

// Colours come from CSS variables so one style serves light and dark (see style.css).
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.operatorKeyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword], color: "var(--hl-keyword)", fontWeight: "600" },
  { tag: [t.string, t.special(t.string)], color: "var(--hl-string)" },
  { tag: [t.comment, t.lineComment, t.blockComment], color: "var(--hl-comment)", fontStyle: "italic" },
  { tag: [t.number, t.bool, t.null], color: "var(--hl-number)" },
  { tag: [t.typeName, t.className], color: "var(--hl-type)" },
  { tag: [t.special(t.variableName), t.function(t.variableName), t.function(t.propertyName)], color: "var(--hl-function)" },
  { tag: [t.definition(t.variableName)], color: "var(--hl-def)" },
]);

const mlsql = StreamLanguage.define(mlsqlStream);

function languageFor(kind) {
  if (kind === "python") return [python(), annotationLines];
  if (kind === "mlsql") return mlsql;
  return []; // markdown: plain text while editing, rendered when not
}

// `--%python`, `--%input=t`, `#%output=m`: header lines at column 0 of a Python cell.
const annotationMark = Decoration.line({ class: "cm-annotation" });
const ANNOTATION = /^(--%|#%)/;

const annotationLines = ViewPlugin.fromClass(
  class {
    constructor(view) {
      this.decorations = this.build(view);
    }
    update(u) {
      if (u.docChanged || u.viewportChanged) this.decorations = this.build(u.view);
    }
    build(view) {
      const b = new RangeSetBuilder();
      for (const { from, to } of view.visibleRanges) {
        for (let pos = from; pos <= to; ) {
          const line = view.state.doc.lineAt(pos);
          if (ANNOTATION.test(line.text)) b.add(line.from, line.from, annotationMark);
          pos = line.to + 1;
        }
      }
      return b.finish();
    }
  },
  { decorations: (v) => v.decorations },
);

// The error line: set by an error card, cleared as soon as the user edits the cell.
const setErrorLine = StateEffect.define();
const errorMark = Decoration.line({ class: "cm-error-line" });

const errorLine = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) {
      if (e.is(setErrorLine)) {
        const n = e.value;
        if (!n || n < 1 || n > tr.state.doc.lines) return Decoration.none;
        const line = tr.state.doc.line(n);
        return Decoration.set([errorMark.range(line.from)]);
      }
    }
    return tr.docChanged ? Decoration.none : deco.map(tr.changes);
  },
  provide: (f) => EditorView.decorations.from(f),
});

const theme = EditorView.theme({
  "&": { fontSize: "13px" },
  ".cm-content": { fontFamily: "var(--mono)", caretColor: "var(--fg)" },
  ".cm-gutters": { background: "transparent", border: "none", color: "var(--muted)" },
  "&.cm-focused": { outline: "none" },
  // Every cell has an active line; only the focused cell shows it, so the page has one.
  "&:not(.cm-focused) .cm-activeLine": { backgroundColor: "transparent" },
  ".cm-schema": { fontFamily: "var(--mono)", whiteSpace: "pre", padding: "4px 8px" },
});

// Hover over a word of an MLSQL cell: a table of the session shows its schema; a statement,
// !command, algorithm or extension its doc (with its section of docs/language.md).
function tableHover(getKind) {
  return hoverTooltip(async (view, pos) => {
    if (getKind() !== "mlsql") return null;
    const { from, to, text } = view.state.doc.lineAt(pos);
    let start = pos - from;
    let end = start;
    while (start > 0 && /\w/.test(text[start - 1])) start -= 1;
    while (end < text.length && /\w/.test(text[end])) end += 1;
    if (start === end) return null;
    if (text[start - 1] === "!") start -= 1; // a command: its doc, not a table's
    const schema = await schemaOf(text.slice(start, end));
    if (!schema) return null;
    return {
      pos: from + start,
      end: Math.min(to, from + end),
      above: true,
      create: () => {
        const dom = document.createElement("div");
        dom.className = "cm-schema";
        dom.dataset.role = "schema";
        dom.append(docNode(schemaText(schema))); // a doc's section of docs/language.md as a link
        return { dom };
      },
    };
  }, { hoverTime: 400 });
}

// Editors are mounted when their cell comes near the viewport: 50 CodeMirror views measuring
// themselves made the first frame of a big notebook slow. Until then the cell shows its source
// as plain text, which looks the same at a glance and costs one text node.
let observer = null;
const mounters = new WeakMap();

function watch(el, mount) {
  if (typeof IntersectionObserver === "undefined") return mount();
  if (!observer) {
    observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        observer.unobserve(e.target);
        mounters.get(e.target)?.();
      }
    }, { rootMargin: "800px 0px" });
  }
  mounters.set(el, mount);
  observer.observe(el);
}

export function createEditor(parent, opts) {
  let real = null;
  let doc = opts.doc;
  let kind = opts.kind;
  let binding = null; // {ytext, awareness} once the cell is part of the shared document
  let unobserve = null; // while not mounted, the placeholder follows the Y.Text itself
  let marks = null; // the find bar's last marks ({ranges, at}), drawn once the editor mounts
  const placeholder = document.createElement("pre");
  placeholder.className = "cm-static";
  placeholder.textContent = doc;
  parent.append(placeholder);
  const mount = () => {
    if (real) return real;
    observer?.unobserve(parent);
    placeholder.remove();
    unobserve?.();
    unobserve = null;
    real = mountEditor(parent, { ...opts, doc: binding ? binding.ytext.toString() : doc, kind, binding });
    if (marks && marks.ranges.length) real.findMarks(marks.ranges, marks.at, false);
    return real;
  };
  placeholder.addEventListener("mousedown", (e) => {
    e.preventDefault();
    mount().focus();
  });
  watch(parent, mount);
  return {
    text: () => (real ? real.text() : doc),
    // The selected range ({from, to}); null before the editor is mounted (nothing can be selected).
    selection: () => (real ? real.selection() : null),
    setText(text) {
      if (real) return real.setText(text);
      if (text === doc) return;
      doc = text;
      placeholder.textContent = text;
      opts.onChange?.(text);
    },
    setKind(k) {
      kind = k;
      real?.setKind(k);
    },
    bind(ytext, awareness) {
      if (binding && binding.ytext === ytext) return;
      binding = { ytext, awareness };
      if (real) return real.bind(binding);
      unobserve?.();
      const follow = () => {
        const text = ytext.toString();
        if (text === doc) return;
        doc = text;
        placeholder.textContent = text;
        opts.onChange?.(text);
      };
      ytext.observe(follow);
      unobserve = () => ytext.unobserve(follow);
      follow();
    },
    markError: (line) => mount().markError(line),
    // The find bar's marks (findmarks.js): an editor not mounted yet is mounted only to show the current match.
    findMarks(ranges, at, scroll = false) {
      marks = { ranges, at };
      if (real || scroll) mount().findMarks(ranges, at, scroll);
    },
    clearError: () => real?.clearError(),
    focus: () => mount().focus(),
    hasFocus: () => !!real && real.hasFocus(),
    mount,
    destroy: () => {
      observer?.unobserve(parent);
      unobserve?.();
      real?.destroy();
    },
  };
}

// While the completion list is shown Escape closes only the list: the cell's Escape (leave the
// editor) would send what is typed next to command-mode keys. A list still being asked for is
// not shown yet: Escape then leaves the editor, as the user sees no list to close.
function yieldToCompletion(binding) {
  if (binding.key !== "Escape") return binding;
  return { ...binding, run: (view) => (completionStatus(view.state) === "active" ? false : binding.run(view)) };
}

// keys: cell-level bindings (Shift-Enter, Escape...) that must win over the editor's own.
function mountEditor(parent, { doc, kind, onChange, keys = [], readOnly = false, binding = null }) {
  let currentKind = kind;
  const getKind = () => currentKind;
  const language = new Compartment();
  const editable = new Compartment();
  const collab = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        Prec.highest(keymap.of(keys.map(yieldToCompletion))),
        lineNumbers(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        // Cells are `content-visibility: auto`, which clips what overflows them: menus and hover
        // cards live in the body instead.
        tooltips({ parent: document.body }),
        autocompletion({ override: [completionSource(getKind)], activateOnTypingDelay: 150 }),
        tableHover(getKind),
        highlightActiveLine(),
        indentUnit.of("    "),
        syntaxHighlighting(highlight),
        keymap.of([...closeBracketsKeymap, ...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        language.of(languageFor(kind)),
        // Both: `editable` keeps the content out of focus and typing, `readOnly` also refuses
        // edits that arrive another way (paste, drop, a command bound to a key).
        editable.of([EditorView.editable.of(!readOnly), EditorState.readOnly.of(readOnly)]),
        errorLine,
        findMarks,
        collab.of(collabExtension(binding)),
        theme,
        EditorView.lineWrapping,
        EditorView.updateListener.of((u) => {
          if (u.docChanged && onChange) onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  // A dispatch makes CodeMirror read the DOM selection, which forces a layout; on a cold load of
  // 50 cells that was one full-page layout per cell, so clearing an absent mark does nothing.
  let marked = false;
  return {
    view,
    text: () => view.state.doc.toString(),
    selection: () => ({ from: view.state.selection.main.from, to: view.state.selection.main.to }),
    setText(text) {
      if (text === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    // Another Y.Text (the cell moved, or the document was rebuilt): unbind, take its text, bind.
    bind(next) {
      view.dispatch({ effects: collab.reconfigure([]) });
      const text = next.ytext.toString();
      if (text !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
      view.dispatch({ effects: collab.reconfigure(collabExtension(next)) });
    },
    setKind: (k) => {
      currentKind = k;
      view.dispatch({ effects: language.reconfigure(languageFor(k)) });
    },
    markError(line) {
      marked = !!line;
      view.dispatch({ effects: setErrorLine.of(line) });
      if (line && line <= view.state.doc.lines) {
        const pos = view.state.doc.line(line).from;
        view.dispatch({ effects: EditorView.scrollIntoView(pos, { y: "nearest" }) });
      }
    },
    clearError() {
      if (!marked) return;
      marked = false;
      view.dispatch({ effects: setErrorLine.of(null) });
    },
    findMarks: (ranges, at, scroll) => showFindMarks(view, ranges, at, scroll),
    focus: () => view.focus(),
    hasFocus: () => view.hasFocus,
    destroy: () => view.destroy(),
  };
}
