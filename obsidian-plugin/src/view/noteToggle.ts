/**
 * The pane's "Ask about this note" switch, above the question box: while it is on, each
 * question is sent with the note of the last active editor and its selection (`noteContext.ts`).
 * It names that note, and is off and disabled while no note is open.
 *
 * Stable `data-testid`s: note-toggle (the checkbox), note-toggle-label.
 */
import { h } from "./dom";
import { noteTitle } from "./noteContext";

export class NoteToggle {
  readonly el: HTMLElement;
  readonly input: HTMLInputElement;
  readonly labelEl: HTMLElement;
  private path: string | null = null;

  constructor(parent: HTMLElement) {
    this.el = h(parent, "label", { cls: "vault-rag-note-toggle" });
    this.input = h(this.el, "input", { testid: "note-toggle", attrs: { type: "checkbox" } });
    this.labelEl = h(this.el, "span", { testid: "note-toggle-label" });
    this.setNote(null);
  }

  /** The note questions would be about now (the last active editor's), or null. */
  setNote(path: string | null): void {
    this.path = path;
    this.input.disabled = path === null;
    if (path === null) this.input.checked = false;
    this.labelEl.textContent = path === null ? "Ask about a note: open one first" : `Ask about “${noteTitle(path)}”`;
    this.el.title = path === null ? "" : `Send ${path} (and the text selected in it) with the question`;
  }

  get note(): string | null {
    return this.path;
  }

  /** Whether the next question is about the note. */
  get on(): boolean {
    return this.input.checked && this.path !== null;
  }

  set on(value: boolean) {
    this.input.checked = value && this.path !== null;
  }
}
