/**
 * The sidecar's log in a modal: what the process the plugin started printed (and the plugin's
 * own lines: what it ran, how it ended), the token blanked out, following new lines while open.
 *
 * Stable `data-testid`s: sidecar-log-state, sidecar-log, sidecar-log-copy.
 */
import { type App, Modal } from "obsidian";

import { h } from "../view/dom";
import type { SidecarLog, SupervisorState } from "./supervisor";

export function describeSupervisor(state: SupervisorState): string {
  switch (state.kind) {
    case "idle":
      return "The plugin has not started a sidecar.";
    case "starting":
      return "Starting the sidecar…";
    case "running":
      return (state.ours ? "Running (started by this plugin)." : "A sidecar started elsewhere answers; the plugin uses it.") +
        (state.tokenProblem ? ` ${state.tokenProblem}` : "");
    case "failed":
      return state.message;
    case "stopped":
      return "Stopped.";
  }
}

export class SidecarLogModal extends Modal {
  private unsubscribe: (() => void) | null = null;

  constructor(
    app: App,
    private readonly log: SidecarLog,
    private readonly state: () => SupervisorState,
  ) {
    super(app);
  }

  override onOpen(): void {
    this.titleEl.setText("The sidecar's log");
    const root = this.contentEl;
    root.empty();
    root.addClass("vault-rag-log-modal");
    const stateEl = h(root, "div", { cls: "vault-rag-log-state", testid: "sidecar-log-state" });
    const pre = h(root, "pre", { cls: "vault-rag-log", testid: "sidecar-log" });
    const copy = h(root, "button", { text: "Copy log", testid: "sidecar-log-copy" });
    copy.addEventListener("click", () => void navigator.clipboard.writeText(this.log.text));
    const render = () => {
      stateEl.textContent = describeSupervisor(this.state());
      pre.textContent = this.log.lineCount === 0 ? "(nothing yet)" : this.log.text;
      pre.scrollTop = pre.scrollHeight;
    };
    render();
    this.unsubscribe = this.log.onChange(render);
  }

  override onClose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.contentEl.empty();
  }
}
