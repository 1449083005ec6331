/**
 * Where "Insert at cursor" writes: the markdown editor that was active last. Clicking the
 * button focuses the ask pane, so the active view then is the pane itself; the view follows
 * `active-leaf-change` and hands every markdown view it sees to `LastEditor`, which keeps the
 * latest one whose note is still open.
 */

/** The part of Obsidian's `Editor` this needs. */
export interface EditorLike {
  /** Replaces the selection, or inserts at the cursor when nothing is selected. */
  replaceSelection(text: string): void;
  /** The selected text ("" when nothing is selected). */
  getSelection?(): string;
  focus?(): void;
}

/** The part of Obsidian's `MarkdownView` this needs (its `file` is null once it is closed). */
export interface MarkdownViewLike {
  editor: EditorLike;
  file: { path: string } | null;
}

/** What to insert for an answer: its markdown, set apart from the text around the cursor. */
export function insertionText(answer: string): string {
  const text = answer.trim();
  return text ? `${text}\n` : "";
}

export class LastEditor {
  private view: MarkdownViewLike | null = null;

  /** A view became active; remembered when it is a markdown view. */
  follow(view: MarkdownViewLike | null): void {
    if (view !== null) this.view = view;
  }

  /** The note the next insert goes into, or null when no editor is open. */
  get target(): string | null {
    return this.view?.file?.path ?? null;
  }

  /** The text selected in that editor now ("" for none, or no editor). */
  get selection(): string {
    return this.view?.file ? (this.view.editor.getSelection?.() ?? "") : "";
  }

  /** Insert `answer` at the cursor of the last editor; the note's path, or null (none open). */
  insert(answer: string): string | null {
    const view = this.view;
    const path = view?.file?.path ?? null;
    const text = insertionText(answer);
    if (view === null || path === null || !text) return null;
    view.editor.replaceSelection(text);
    view.editor.focus?.();
    return path;
  }
}
