/**
 * The desktop settings tab's "Other devices": the remote listener of the plugin's own sidecar
 * (`--remote-listen`, off by default), "Pair a device" (a one-time code from
 * `POST /v1/devices/pair`, and the QR code of the `obsidian://vault-rag-pair` link with the
 * desktop's LAN address), and the paired devices with when each was last seen and a Revoke button.
 */
import { Setting } from "obsidian";

import type { DeviceList, PairCode } from "../client/devices";
import { DEFAULT_REMOTE_LISTEN, parseListen, type VaultRagSettings } from "../settings";
import { clear, h } from "../view/dom";
import { pairLink } from "./pairing";
import { renderQr } from "./qr";

/** What the section needs of the plugin (`services.ts`). */
export interface DevicesControls {
  pairCode(): Promise<PairCode>;
  list(): Promise<DeviceList>;
  revoke(id: string): Promise<unknown>;
  /** Apply "Allow other devices" / the address: restart the plugin's own sidecar with (or
   * without) `--remote-listen`. What happened, in one line. */
  apply(): Promise<string>;
}

/** "3 min ago", "yesterday", from Unix seconds. */
export function lastSeen(seconds: number | null | undefined, nowMs = Date.now()): string {
  if (seconds === null || seconds === undefined) return "never";
  const ago = Math.max(0, nowMs / 1000 - seconds);
  if (ago < 60) return "just now";
  if (ago < 3600) return `${Math.floor(ago / 60)} min ago`;
  if (ago < 86_400) return `${Math.floor(ago / 3600)} h ago`;
  const days = Math.floor(ago / 86_400);
  return days === 1 ? "yesterday" : `${days} days ago`;
}

export function displayDevicesSection(containerEl: HTMLElement, settings: VaultRagSettings, save: () => Promise<void>, devices: DevicesControls): void {
  new Setting(containerEl).setName("Other devices").setHeading();
  const status = new Setting(containerEl)
    .setName("Allow other devices")
    .setDesc(
      "A phone or another laptop asks this desktop's sidecar over a second listener that accepts paired devices only, " +
        "every message sealed end to end (docs/remote.md). Restarts the sidecar the plugin started.",
    );
  const applied = (line: string) => status.setDesc(line);
  status.addToggle((toggle) =>
    toggle.setValue(settings.allowRemote).onChange(async (value) => {
      settings.allowRemote = value;
      await save();
      applied(await devices.apply());
    }),
  );
  const listen = new Setting(containerEl).setName("Listen on").setDesc("HOST:PORT of the listener for other devices: 0.0.0.0 for the home network, or a tailnet address.");
  listen.addText((text) =>
    text
      .setPlaceholder(DEFAULT_REMOTE_LISTEN)
      .setValue(settings.remoteListen)
      .onChange(async (value) => {
        const ok = parseListen(value) !== null;
        listen.descEl.toggleClass("vault-rag-setting-error", !ok);
        if (!ok) return;
        settings.remoteListen = value.trim();
        await save();
      }),
  );

  const pairing = new Setting(containerEl).setName("Pair a device").setDesc("Shows a one-time code (valid a few minutes, for one device), and the same as a code to scan with the phone's camera.");
  const shown = h(containerEl, "div", { cls: "vault-rag-pairing", testid: "pairing" });
  pairing.addButton((button) =>
    button.setButtonText("Pair a device").onClick(async () => {
      clear(shown);
      try {
        const code = await devices.pairCode();
        h(shown, "div", { cls: "vault-rag-pair-code", text: code.code, testid: "pair-code" });
        const link = pairLink(code.remote_url, code.code);
        renderQr(shown, link);
        const expires = new Date(code.expires_at * 1000).toLocaleTimeString();
        h(shown, "div", {
          cls: "setting-item-description",
          text: `On the phone, scan the QR code with the camera (it opens Obsidian and pairs), or type ${code.remote_url} and the code in the Vault RAG pane. Valid until ${expires}.`,
        });
      } catch (error) {
        h(shown, "div", { cls: "vault-rag-setting-error", text: messageOf(error) });
      }
    }),
  );

  const listEl = h(containerEl, "div", { cls: "vault-rag-devices", testid: "devices" });
  const refresh = async () => {
    clear(listEl);
    try {
      const list = await devices.list();
      if (list.problem) h(listEl, "div", { cls: "vault-rag-setting-error", text: list.problem });
      const active = list.devices.filter((d) => d.revoked === null || d.revoked === undefined);
      if (active.length === 0) new Setting(listEl).setName("No paired devices").setDesc(list.remote_url ? `Listening at ${list.remote_url}.` : "The listener for other devices is off.");
      for (const device of active) {
        new Setting(listEl)
          .setName(device.name)
          .setDesc(`${device.role === "write" ? "Reads and writes notes" : "Reads"} · last seen ${lastSeen(device.last_seen)}`)
          .addButton((button) =>
            button
              .setButtonText("Revoke")
              .onClick(async () => {
                await devices.revoke(device.id).catch(() => undefined);
                await refresh();
              }),
          );
      }
    } catch (error) {
      new Setting(listEl).setName("Paired devices").setDesc(messageOf(error));
    }
  };
  new Setting(containerEl)
    .setName("Paired devices")
    .setDesc("When each device was last seen; revoking one refuses its next message at once.")
    .addButton((button) => button.setButtonText("Refresh").onClick(() => void refresh()));
  containerEl.appendChild(listEl);
  void refresh();
}

function messageOf(error: unknown): string {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === "remote_off") return "Turn on Allow other devices first (the sidecar then listens for them).";
  return error instanceof Error ? error.message : String(error);
}
