/**
 * The question before an embedding model change: what it costs (from the sidecar) and two
 * buttons. Resolves true only on "Re-index"; closing the dialog any other way is "no".
 *
 * Stable `data-testid`s: embedding-cost, embedding-cost-detail, embedding-confirm, embedding-cancel.
 */
import { type App, Modal } from "obsidian";

import type { EmbeddingCost } from "../client/embeddings";
import { h } from "../view/dom";
import { describeCost } from "./embeddingChoice";

export class EmbeddingCostModal extends Modal {
  private answer = false;

  constructor(
    app: App,
    private readonly cost: EmbeddingCost,
    private readonly done: (yes: boolean) => void,
  ) {
    super(app);
  }

  override onOpen(): void {
    const text = describeCost(this.cost);
    this.titleEl.setText(text.title);
    const root = this.contentEl;
    root.empty();
    h(root, "p", { text: text.body, testid: "embedding-cost" });
    h(root, "p", { text: text.detail, cls: "setting-item-description", testid: "embedding-cost-detail" });
    const buttons = h(root, "div", { cls: "modal-button-container" });
    const yes = h(buttons, "button", { text: "Re-index with the new model", cls: "mod-cta", testid: "embedding-confirm" });
    const no = h(buttons, "button", { text: "Cancel", testid: "embedding-cancel" });
    yes.addEventListener("click", () => {
      this.answer = true;
      this.close();
    });
    no.addEventListener("click", () => this.close());
  }

  override onClose(): void {
    this.contentEl.empty();
    this.done(this.answer);
  }
}

/** Open the dialog; the user's answer. */
export function askToReindex(app: App, cost: EmbeddingCost): Promise<boolean> {
  return new Promise((resolve) => new EmbeddingCostModal(app, cost, resolve).open());
}
