/**
 * The pane's collection picker: an icon in the toolbar (its tooltip says what the next question
 * searches) that opens a small panel — "All" / "This vault" and a checkbox per collection, each
 * with its kind, counts and skipped files as a tooltip. Hidden while the vault has no source
 * beside it. The logic is `collectionChoice.ts`; the list is `GET /v1/collections`, read when
 * the pane opens and again when the panel opens.
 *
 * Stable `data-testid`s: collection-picker, collection-panel, collection-all, collection-vault,
 * collection-option (with `data-name`).
 */
import { setIcon } from "obsidian";

import type { AskRequest, CollectionList } from "../client";
import {
  type CollectionChoice,
  describeChoice,
  entries,
  hasSources,
  loadChoice,
  preset,
  requestCollections,
  storeChoice,
  toggle,
} from "./collectionChoice";
import { clear, h, show } from "./dom";

export interface CollectionPickerDeps {
  list(signal: AbortSignal): Promise<CollectionList>;
  /** The choice, kept on this device (`collectionChoice.storeChoice`). */
  store: { load(): string | null; save(value: string | null): void };
}

export class CollectionPicker {
  readonly button: HTMLButtonElement;
  readonly panel: HTMLElement;
  private list: CollectionList | null = null;
  private choice: CollectionChoice;
  private loading: AbortController | null = null;

  constructor(toolbar: HTMLElement, panelParent: HTMLElement, private readonly deps: CollectionPickerDeps) {
    this.choice = loadChoice(deps.store.load());
    this.button = h(toolbar, "button", {
      cls: "clickable-icon vault-rag-collection-picker",
      testid: "collection-picker",
      attrs: { type: "button", "aria-expanded": "false", "data-tooltip-position": "bottom" },
    });
    setIcon(this.button, "library");
    this.panel = h(panelParent, "div", { cls: "vault-rag-collection-panel", testid: "collection-panel", attrs: { role: "group" } });
    show(this.panel, false);
    this.button.addEventListener("click", () => void this.toggleOpen());
    this.render();
  }

  /** The field the next question carries: `{collections}` when not the sidecar's default. */
  request(): Pick<AskRequest, "collections"> {
    return requestCollections(this.list, this.choice);
  }

  get isOpen(): boolean {
    return !this.panel.hidden;
  }

  /** Read the list again; a failure keeps what was shown (and the choice). */
  async refresh(): Promise<void> {
    this.loading?.abort();
    const controller = new AbortController();
    this.loading = controller;
    try {
      const list = await this.deps.list(controller.signal);
      if (controller.signal.aborted) return;
      this.list = list;
      this.render();
    } catch {
      // an older sidecar (no /v1/collections) or none running: no picker, questions unchanged
    } finally {
      if (this.loading === controller) this.loading = null;
    }
  }

  async toggleOpen(): Promise<void> {
    const opening = !this.isOpen;
    show(this.panel, opening);
    this.button.setAttribute("aria-expanded", String(opening));
    if (opening) await this.refresh();
  }

  destroy(): void {
    this.loading?.abort();
    this.panel.remove();
  }

  private pick(choice: CollectionChoice): void {
    this.choice = choice;
    this.deps.store.save(storeChoice(choice));
    this.render();
  }

  private render(): void {
    const list = this.list;
    show(this.button, hasSources(list));
    if (list === null) return;
    const label = `Search: ${describeChoice(list, this.choice)}`;
    this.button.setAttribute("aria-label", label);
    this.button.title = label;
    this.button.classList.toggle("is-active", requestCollections(list, this.choice).collections !== undefined);
    clear(this.panel);
    const presets = h(this.panel, "div", { cls: "vault-rag-collection-presets" });
    const all = h(presets, "button", { text: "All", testid: "collection-all", attrs: { type: "button", title: "Search the vault and every source" } });
    const vault = h(presets, "button", { text: "This vault", testid: "collection-vault", attrs: { type: "button", title: "Search this vault alone, none of the sources" } });
    all.addEventListener("click", () => this.pick(preset(list, "all")));
    vault.addEventListener("click", () => this.pick(preset(list, "vault")));
    for (const entry of entries(list, this.choice)) {
      const row = h(this.panel, "label", { cls: "vault-rag-collection-option", testid: "collection-option", attrs: { "data-name": entry.name, title: entry.title } });
      const box = h(row, "input", { attrs: { type: "checkbox", "aria-label": entry.label } });
      box.checked = entry.checked;
      box.disabled = entry.disabled;
      box.addEventListener("change", () => this.pick(toggle(list, this.choice, entry.name, box.checked)));
      h(row, "span", { text: entry.label });
    }
    if (list.problem) h(this.panel, "div", { cls: "vault-rag-error", text: `Sources: ${list.problem}` });
  }
}
