/**
 * Opening and previewing a `NoteTarget` in Obsidian's workspace: `openLinkText` with the cited
 * line as ephemeral state, a new tab (or split, or window) for the modifier `Keymap.isModEvent`
 * reads from the click, and the `hover-link` event that the Page preview core plugin answers
 * for a view registered with `registerHoverLinkSource`.
 */
import { type App, type HoverParent, Keymap } from "obsidian";

import { hoverCall, type NoteTarget, openCall } from "./noteTarget";

/** Open `target`; Ctrl/Cmd-click (or a middle click) opens it in a new tab. With `ifMissing`
 * (a device whose notes arrive by sync: the desktop may cite a note this one does not have yet),
 * a note this vault does not hold is not opened — `openLinkText` would create it — and
 * `ifMissing` says so instead. */
export async function openNoteTarget(
  app: App,
  target: NoteTarget,
  event: MouseEvent | null,
  sourcePath = "",
  ifMissing?: (target: NoteTarget) => void,
): Promise<void> {
  if (ifMissing !== undefined && app.metadataCache.getFirstLinkpathDest(target.notePath, sourcePath) === null) {
    ifMissing(target);
    return;
  }
  const { linktext, eState } = openCall(target);
  const newLeaf = event === null ? false : Keymap.isModEvent(event);
  if (eState === undefined) await app.workspace.openLinkText(linktext, sourcePath, newLeaf);
  else await app.workspace.openLinkText(linktext, sourcePath, newLeaf, { eState });
}

/** Ask the Page preview plugin to show `target` (scrolled to its line) over `targetEl`. */
export function hoverNoteTarget(
  app: App,
  source: string,
  parent: HoverParent,
  event: MouseEvent,
  targetEl: HTMLElement,
  target: NoteTarget,
  sourcePath = "",
): void {
  const { linktext, state } = hoverCall(target);
  app.workspace.trigger("hover-link", {
    event,
    source,
    hoverParent: parent,
    targetEl,
    linktext,
    sourcePath,
    ...(state === undefined ? {} : { state }),
  });
}

/** The notice of a cited note this device does not hold. */
export function missingNoteMessage(target: NoteTarget): string {
  return `Vault RAG: “${target.notePath}” is not in this vault on this device (not synced yet, or excluded from sync). It was cited from your desktop's index.`;
}
