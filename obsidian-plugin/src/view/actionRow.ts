/**
 * The row of icon buttons under an answer: Copy, Insert, Regenerate, Edit, 👍, 👎, Save as note.
 * Each is an icon with a tooltip (`aria-label`, which Obsidian shows on hover, and `title` for
 * a plain page), so the row fits one line of a narrow pane; the status of the last action
 * follows on the line below. Stable `data-testid`s: copy, insert, regenerate, edit-question,
 * thumbs-up, thumbs-down, save-as-note, action-status.
 */
import { setIcon } from "obsidian";

import { h } from "./dom";

export interface ActionSpec {
  testid: string;
  /** A Lucide icon name, as Obsidian's `setIcon` knows it. */
  icon: string;
  label: string;
  onClick(): void;
}

export const ANSWER_ACTIONS = {
  copy: { testid: "copy", icon: "copy", label: "Copy the answer" },
  insert: { testid: "insert", icon: "text-cursor-input", label: "Insert the answer at the cursor of the last active note" },
  regenerate: { testid: "regenerate", icon: "refresh-cw", label: "Ask this question again" },
  edit: { testid: "edit-question", icon: "pencil", label: "Edit this question and send it again" },
  up: { testid: "thumbs-up", icon: "thumbs-up", label: "Good answer" },
  down: { testid: "thumbs-down", icon: "thumbs-down", label: "Bad answer" },
  save: { testid: "save-as-note", icon: "file-plus", label: "Save as note" },
} as const;

export type ActionName = keyof typeof ANSWER_ACTIONS;

export class ActionRow {
  readonly el: HTMLElement;
  readonly statusEl: HTMLElement;
  readonly buttons: Record<ActionName, HTMLButtonElement>;

  constructor(parent: HTMLElement, handlers: Record<ActionName, () => void>) {
    const wrap = h(parent, "div", { cls: "vault-rag-actions-wrap" });
    this.el = h(wrap, "div", { cls: "vault-rag-actions", attrs: { role: "toolbar", "aria-label": "Answer actions" } });
    const buttons: Partial<Record<ActionName, HTMLButtonElement>> = {};
    for (const name of Object.keys(ANSWER_ACTIONS) as ActionName[]) {
      const spec = ANSWER_ACTIONS[name];
      const button = h(this.el, "button", {
        cls: "clickable-icon vault-rag-action",
        testid: spec.testid,
        attrs: { type: "button", "aria-label": spec.label, title: spec.label, "data-tooltip-position": "top" },
      });
      setIcon(button, spec.icon);
      button.addEventListener("click", handlers[name]);
      buttons[name] = button;
    }
    this.buttons = buttons as Record<ActionName, HTMLButtonElement>;
    this.statusEl = h(wrap, "div", { cls: "vault-rag-action-status", testid: "action-status", attrs: { "aria-live": "polite" } });
  }
}
