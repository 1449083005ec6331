import { type App, type Command, Notice, type TFile, type WorkspaceLeaf } from "obsidian";

import { type ResolveSubpath, type ResolvedNote, resolveNote, type VaultAccess } from "./resolver";
import type { SidecarControls } from "./settings";

/** Asynchronous work started by commands, aborted when the plugin unloads. */
export class BackgroundTasks {
  private readonly running = new Set<AbortController>();

  /** Run `task`; an abort is silent, any other failure shows a notice. */
  async run(task: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.running.add(controller);
    try {
      await task(controller.signal);
    } catch (error) {
      if (!controller.signal.aborted) new Notice(`Vault RAG failed: ${String(error)}`);
    } finally {
      this.running.delete(controller);
    }
  }

  get size(): number {
    return this.running.size;
  }

  abortAll(): void {
    for (const controller of this.running) controller.abort();
    this.running.clear();
  }
}

export interface ResolverDeps {
  vault: VaultAccess<TFile>;
  resolveSubpath: ResolveSubpath;
}

/** The notice text for a resolved note. */
export function describeResolution(name: string, result: ResolvedNote): string {
  const notes = result.dependencies.length;
  const warnings = result.warnings.length;
  return (
    `Vault RAG: "${name}" resolves to ${result.text.length} characters ` +
    `(${notes} embedded ${notes === 1 ? "note" : "notes"}, ` +
    `${warnings} ${warnings === 1 ? "warning" : "warnings"}).`
  );
}

/** Command: resolve the active note's embeds and show the resolved length. */
export function resolveActiveNoteCommand(app: App, deps: ResolverDeps, tasks: BackgroundTasks): Command {
  return {
    id: "resolve-active-note-embeds",
    name: "Resolve embeds of the active note",
    checkCallback: (checking: boolean) => {
      const file = app.workspace.getActiveFile();
      if (file === null || file.extension !== "md") return false;
      if (!checking) {
        void tasks.run(async (signal) => {
          const result = await resolveNote(deps.vault, file, { resolveSubpath: deps.resolveSubpath, signal });
          if (!signal.aborted) new Notice(describeResolution(file.basename, result));
        });
      }
      return true;
    },
  };
}

/** Show the ask pane in the right sidebar, reusing an open one; its leaf (null: no room). */
export async function openAskView(app: App, viewType: string): Promise<WorkspaceLeaf | null> {
  const existing = app.workspace.getLeavesOfType(viewType)[0];
  const leaf = existing ?? app.workspace.getRightLeaf(false);
  if (!leaf) return null;
  if (!existing) await leaf.setViewState({ type: viewType, active: true });
  await app.workspace.revealLeaf(leaf);
  return leaf;
}

export function openAskViewCommand(app: App, viewType: string): Command {
  return { id: "open-ask-pane", name: "Ask the vault", callback: () => void openAskView(app, viewType) };
}

/** Command: open the ask pane with "Ask about this note" on, for the active markdown note
 * (and the text selected in it); `onOpen` gets the pane's view. */
export function askAboutNoteCommand(app: App, viewType: string, onOpen: (view: unknown) => void): Command {
  return {
    id: "ask-about-note",
    name: "Ask about this note",
    checkCallback: (checking: boolean) => {
      const file = app.workspace.getActiveFile();
      if (file === null || file.extension !== "md") return false;
      if (!checking) void openAskView(app, viewType).then((leaf) => leaf && onOpen(leaf.view));
      return true;
    },
  };
}

export function openRelatedViewCommand(app: App, viewType: string): Command {
  return { id: "open-related-notes", name: "Show related notes", callback: () => void openAskView(app, viewType) };
}

/** Command: compare every note with the sidecar's index and send what differs. */
export function reindexCommand(reindex: () => Promise<void>, tasks: BackgroundTasks): Command {
  return { id: "reindex-vault", name: "Re-index vault", callback: () => void tasks.run(() => reindex()) };
}

/** Commands to start the sidecar (desktop only) and to show its log. */
export function sidecarCommands(sidecar: SidecarControls): Command[] {
  const commands: Command[] = [{ id: "show-sidecar-log", name: "Show the sidecar's log", callback: () => sidecar.showLog() }];
  if (sidecar.canStart) commands.unshift({ id: "start-sidecar", name: "Start the sidecar", callback: () => void sidecar.start() });
  return commands;
}
