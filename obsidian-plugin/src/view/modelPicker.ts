/**
 * The pane's per-conversation model picker: a compact dropdown in the toolbar fed by the
 * sidecar's `GET /v1/models` (the model in use and what its server lists). The model picked is
 * kept for the conversation (`models/threadModels.ts`) and travels with each of its questions
 * (`AskRequest.model`); "Default" sends nothing, so the sidecar's model in use answers.
 *
 * Stable `data-testid`: model-picker.
 */
import type { AskRequest } from "../client";
import { type PickedModel, pickerOptions, type ThreadModels } from "../models/threadModels";
import { clear, h } from "./dom";

export interface ModelList {
  /** The chat model in use (null: none, answers quote the notes). */
  inUse: string | null;
  /** What its server lists at `/v1/models`. */
  models: string[];
  /** Why the server's list could not be read (null: it was). */
  error: string | null;
}

export interface ModelPickerDeps {
  list(signal: AbortSignal): Promise<ModelList>;
  store: ThreadModels;
  /** Re-reading the list when the picker is opened: not more often than this (default 15 s). */
  refreshMs?: number;
  now?: () => number;
}

const DEFAULT = "default";
const encode = (value: PickedModel | null): string => (value === null ? DEFAULT : `model:${value}`);
const decode = (value: string): PickedModel | null => (value.startsWith("model:") ? value.slice("model:".length) : null);

export class ModelPicker {
  readonly el: HTMLSelectElement;
  private list: ModelList = { inUse: null, models: [], error: null };
  private threadId = "";
  private loadedAt = -Infinity;
  private loading: AbortController | null = null;

  constructor(
    parent: HTMLElement,
    private readonly deps: ModelPickerDeps,
  ) {
    this.el = h(parent, "select", { cls: "dropdown vault-rag-model-picker", testid: "model-picker", attrs: { "aria-label": "Chat model for this conversation" } });
    this.el.addEventListener("change", () => this.deps.store.set(this.threadId, decode(this.el.value)));
    // The list may have changed (a model pulled, the server started): read it again on use.
    const stale = () => {
      if ((this.deps.now ?? Date.now)() - this.loadedAt >= (this.deps.refreshMs ?? 15_000)) void this.refresh();
    };
    this.el.addEventListener("focus", stale);
    this.el.addEventListener("pointerdown", stale);
    this.render();
  }

  /** The model picked for the shown conversation (null: the model in use). */
  get picked(): PickedModel | null {
    return decode(this.el.value);
  }

  /** The field the next question carries: `{model}` when one was picked, else nothing. */
  request(): Pick<AskRequest, "model"> {
    const picked = this.picked;
    return picked === null ? {} : { model: picked };
  }

  /** Show the model kept for `threadId` (a new or resumed conversation). */
  setThread(threadId: string): void {
    this.threadId = threadId;
    this.render();
  }

  /** Read the model list from the sidecar again; a failure keeps the list shown. */
  async refresh(): Promise<void> {
    this.loading?.abort();
    const controller = new AbortController();
    this.loading = controller;
    try {
      const list = await this.deps.list(controller.signal);
      if (controller.signal.aborted) return;
      this.list = list;
      this.loadedAt = (this.deps.now ?? Date.now)();
      this.render();
    } catch {
      if (!controller.signal.aborted) this.el.title = "The sidecar's model list could not be read; try again once it runs.";
    } finally {
      if (this.loading === controller) this.loading = null;
    }
  }

  destroy(): void {
    this.loading?.abort();
  }

  private render(): void {
    const picked = this.deps.store.get(this.threadId);
    clear(this.el);
    for (const option of pickerOptions(this.list.inUse, this.list.models, picked)) {
      h(this.el, "option", { text: option.label, attrs: { value: encode(option.value) } });
    }
    this.el.value = encode(picked);
    const error = this.list.error && this.list.inUse ? ` (${this.list.error})` : "";
    this.el.title = this.list.inUse ? `Chat model for this conversation; default: ${this.list.inUse}${error}` : "Chat model for this conversation";
  }
}
