// @vitest-environment happy-dom
/**
 * The plugin on a phone: `main.ts` with `Platform.isMobile` builds `MobileServices` (no sidecar
 * is started or looked for), the `obsidian://vault-rag-pair` handler pairs, the ask pane's empty
 * state offers "Connect to your desktop" and says when the desktop is asleep or refused this
 * device; a cited note this device lacks is reported, not created. Also the desktop's side:
 * `--remote-listen` in the command, the QR code, the device list's parsing and "last seen".
 */
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import * as obsidian from "obsidian";
import { afterEach, describe, expect, it, vi } from "vitest";

import VaultRagPlugin from "../src/main";
import { parseDeviceList, parsePairCode, parseRevoked } from "../src/client/devices";
import { sealPairReply } from "../src/remote/envelope";
import { lastSeen } from "../src/remote/devicesSection";
import { MobileServices } from "../src/remote/mobile";
import { PAIR_ACTION, type JsonPost } from "../src/remote/pairing";
import { qrPath } from "../src/remote/qr";
import { PakeDevice, respond, sameBytes } from "../src/remote/spake2";
import { DEVICE_KEY_SECRET } from "../src/remote/store";
import { parseSettings } from "../src/settings";
import { withRemoteListen } from "../src/sidecar/command";
import { StatusPanel } from "../src/view/indexStatus";
import { missingNoteMessage, openNoteTarget } from "../src/view/workspaceLinks";
import { noteTarget } from "../src/view/noteTarget";

const shim = obsidian as unknown as {
  Platform: { isMobile: boolean };
  Notice: { shown: string[] };
  Plugin: new (...args: unknown[]) => unknown;
};

/** The sidecar's two pairing steps for `code` (the protocol's own functions). */
function pairingServer(code: string): { post: JsonPost; calls: string[] } {
  let keys: ReturnType<typeof respond>["keys"] | null = null;
  let name = "";
  const calls: string[] = [];
  const post: JsonPost = async (url, body) => {
    calls.push(url);
    const b = body as Record<string, string>;
    if (url.endsWith("/pair/start")) {
      name = b.name as string;
      const reply = respond(name, "srv-1", new PakeDevice(name, code).w, hexToBytes(b.pA as string));
      keys = reply.keys;
      return { status: 200, json: { pair_id: "p1", server_id: "srv-1", pB: bytesToHex(reply.pB), confirm_b: bytesToHex(keys.confirmB) } };
    }
    if (keys === null || !sameBytes(keys.confirmA, hexToBytes(b.confirm_a as string))) return { status: 401, json: { code: "pairing_refused" } };
    return { status: 200, json: { pair_id: "p1", sealed: bytesToHex(sealPairReply(keys.ke, "p1", { device_id: "dev-9", name, role: "read", server_id: "srv-1" })) } };
  };
  return { post, calls };
}

function secretApp() {
  const secrets = new Map<string, string>();
  const app = {
    secretStorage: { getSecret: (id: string) => secrets.get(id) ?? null, setSecret: (id: string, value: string) => void secrets.set(id, value) },
    workspace: { onLayoutReady: (callback: () => void) => callback(), getLeavesOfType: () => [], getRightLeaf: () => null, revealLeaf: async () => undefined },
    metadataCache: { getFirstLinkpathDest: () => null },
  };
  return { app, secrets };
}

afterEach(() => {
  shim.Platform.isMobile = false;
  shim.Notice.shown.length = 0;
});

describe("the plugin on a phone", () => {
  it("never builds the sidecar services; registers the views, the pane and the pairing link", async () => {
    shim.Platform.isMobile = true;
    const { app } = secretApp();
    const plugin = new VaultRagPlugin(app as never, { id: "vault-rag", version: "0.1.0" } as never);
    const fake = plugin as unknown as { views: Map<string, unknown>; protocolHandlers: Map<string, (p: Record<string, string>) => unknown>; statusBarItems: unknown[]; data: unknown };
    fake.data = null;
    await plugin.onload();
    expect(plugin.services).toBeNull();
    expect(plugin.mobile).not.toBeNull();
    expect(plugin.sidecar).toBeNull();
    expect(fake.statusBarItems).toEqual([]);
    expect([...fake.views.keys()]).toEqual(["vault-rag-ask", "vault-rag-related"]);
    expect(fake.protocolHandlers.has(PAIR_ACTION)).toBe(true);
    await fake.protocolHandlers.get(PAIR_ACTION)!({ action: PAIR_ACTION, url: "not a url", code: "1" });
    await vi.waitFor(() => expect(shim.Notice.shown.join("\n")).toMatch(/no valid address and code/));
    expect(plugin.remote?.connect.paired()).toBeNull();
    plugin.onunload();
  });

  it("pairs from the QR code's link: id and key in secret storage, never in data.json", async () => {
    const { app, secrets } = secretApp();
    const settings = parseSettings(null);
    let saved = "";
    const server = pairingServer("24681357");
    const mobile = new MobileServices(app as never, () => settings, {
      save: async () => void (saved = JSON.stringify(settings)),
      secrets: app.secretStorage,
      json: server.post,
      stream: null,
    });
    expect(await mobile.pairFromLink({ url: "http://127.0.0.2:8766", code: "2468-1357" })).toBe(true);
    expect(server.calls).toEqual(["http://127.0.0.2:8766/remote/v1/pair/start", "http://127.0.0.2:8766/remote/v1/pair/finish"]);
    expect(mobile.connect.paired()).toMatchObject({ url: "http://127.0.0.2:8766" });
    expect(saved).toContain('"dev-9"');
    expect(saved).not.toContain(secrets.get(DEVICE_KEY_SECRET));
    expect(shim.Notice.shown.join("\n")).toMatch(/paired with your desktop/);
    expect(await mobile.pairFromLink({ url: "http://127.0.0.2:8766", code: "1111-1111" })).toBe(false);
    expect(shim.Notice.shown.join("\n")).toMatch(/wrong code/);
    expect(mobile.connect.paired()).toMatchObject({ url: "http://127.0.0.2:8766" }); // the old pairing stays
    mobile.stop();
  });

  it("shows connect, asleep-with-retry and refused states in the pane's empty state", () => {
    let paired: { url: string; name: string } | null = null;
    const retry = vi.fn();
    const pair = vi.fn(async () => {
      paired = { url: "http://127.0.0.2:8766", name: "phone" };
    });
    const root = document.createElement("div");
    const panel = new StatusPanel(root, root, { vaultPath: () => null, url: () => "", retry, remote: { paired: () => paired, pair, defaultName: () => "phone" } });
    const text = (id: string) => root.querySelector(`[data-testid="${id}"]`)?.textContent;
    const visible = (id: string) => !(root.querySelector(`[data-testid="${id}"]`) as HTMLElement).hidden;
    panel.update({ connection: "unauthorized", status: null, syncPending: 0, error: null });
    expect(text("empty-title")).toBe("Connect to your desktop");
    expect(visible("connect-form")).toBe(true);
    expect(visible("empty-start")).toBe(false);
    expect(visible("empty-command") && visible("empty-copy")).toBe(false);
    paired = { url: "http://127.0.0.2:8766", name: "phone" };
    panel.update({ connection: "unreachable", status: null, syncPending: 0, error: "x" });
    expect(text("empty-title")).toBe("Your desktop does not answer");
    expect(text("empty-text")).toContain("http://127.0.0.2:8766");
    expect(visible("empty-retry")).toBe(true);
    expect(visible("connect-form")).toBe(false);
    (root.querySelector('[data-testid="empty-retry"]') as HTMLButtonElement).click();
    expect(retry).toHaveBeenCalled();
    panel.update({ connection: "unauthorized", status: null, syncPending: 0, error: "The desktop at … no longer accepts this device. Pair again." });
    expect(text("empty-title")).toBe("The desktop no longer accepts this device");
    expect(visible("connect-form")).toBe(true);
    panel.update({ connection: "ok", status: { notes: 3, note: null } as never, syncPending: 0, error: null });
    expect(text("empty-title")).toBe("Ask your vault");
  });

  it("pairs from the typed address and code, and says why not", async () => {
    const root = document.createElement("div");
    const pair = vi.fn(async (_u: string, code: string) => {
      if (code !== "1234-5678") throw new Error("The desktop refused the code");
    });
    const retry = vi.fn();
    new StatusPanel(root, root, { vaultPath: () => null, url: () => "", retry, remote: { paired: () => null, pair, defaultName: () => "phone 1" } });
    const input = (id: string, value: string) => ((root.querySelector(`[data-testid="${id}"]`) as HTMLInputElement).value = value);
    input("connect-url", "127.0.0.2:8766");
    input("connect-code", "0000-0000");
    const form = root.querySelector('[data-testid="connect-form"]') as HTMLFormElement;
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await vi.waitFor(() => expect(root.querySelector('[data-testid="connect-message"]')?.textContent).toMatch(/refused/));
    input("connect-code", "1234-5678");
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await vi.waitFor(() => expect(retry).toHaveBeenCalled());
    expect(pair).toHaveBeenLastCalledWith("127.0.0.2:8766", "1234-5678", "phone 1");
  });

  it("reports a cited note this device does not hold instead of creating it", async () => {
    const openLinkText = vi.fn();
    const app = { workspace: { openLinkText }, metadataCache: { getFirstLinkpathDest: (p: string) => (p === "Notes/Here" ? {} : null) } };
    const missing = vi.fn();
    await openNoteTarget(app as never, noteTarget("Notes/Gone.md", "", 3), null, "", missing);
    expect(openLinkText).not.toHaveBeenCalled();
    expect(missingNoteMessage(missing.mock.calls[0]![0])).toMatch(/“Notes\/Gone” is not in this vault on this device/);
    await openNoteTarget(app as never, noteTarget("Notes/Here.md", "", 3), null, "", missing);
    expect(openLinkText).toHaveBeenCalledWith("Notes/Here", "", false, { eState: { line: 2 } });
  });
});

describe("the desktop's side", () => {
  it("adds --remote-listen to the plugin's own serve command when other devices are allowed", () => {
    expect(withRemoteListen("vault-rag serve --vault /v --port 0", "0.0.0.0:8766")).toBe("vault-rag serve --vault /v --port 0 --remote-listen 0.0.0.0:8766");
    expect(withRemoteListen("vault-rag serve --remote-listen 10.0.0.1:9", "0.0.0.0:8766")).toBe("vault-rag serve --remote-listen 10.0.0.1:9");
    expect(withRemoteListen("vault-rag serve", null)).toBe("vault-rag serve");
    expect(parseSettings({ allowRemote: true, remoteListen: "[::]:8766" })).toMatchObject({ allowRemote: true, remoteListen: "[::]:8766" });
    expect(parseSettings({ remoteListen: "nope" }).remoteListen).toBe("0.0.0.0:8766");
  });

  it("Allow other devices: the plugin's sidecar command gets --remote-listen; a sidecar it cannot start is explained", async () => {
    const app = {
      loadLocalStorage: () => null,
      saveLocalStorage: () => undefined,
      workspace: { onLayoutReady: () => undefined, getLeavesOfType: () => [], getRightLeaf: () => null, on: () => ({}) },
      vault: { configDir: ".obsidian", getMarkdownFiles: () => [], getFiles: () => [], on: () => ({}) },
      metadataCache: { on: () => ({}), getFirstLinkpathDest: () => null, resolvedLinks: {} },
    };
    const plugin = new VaultRagPlugin(app as never, { id: "vault-rag", version: "0.1.0" } as never);
    (plugin as unknown as { data: unknown }).data = { allowRemote: false, startSidecar: false };
    await plugin.onload();
    const launch = plugin.services!.viewHost.sidecar!;
    expect(launch.command()).not.toContain("--remote-listen");
    plugin.settings.allowRemote = true;
    plugin.settings.remoteListen = "100.64.0.7:8766";
    expect(launch.command()).toMatch(/ --remote-listen 100\.64\.0\.7:8766$/);
    expect(plugin.devices).not.toBeNull();
    // No launcher under Node: the setting says what to run.
    expect(await plugin.devices!.apply()).toBe("Start the sidecar with --remote-listen 100.64.0.7:8766.");
    plugin.onunload();
  });

  it("draws the pairing link as a QR code (version grows with the link; quiet zone of 4)", () => {
    const short = qrPath("obsidian://vault-rag-pair?url=http%3A%2F%2F192.168.1.20%3A8766&code=1234-5678");
    expect(short.size).toBeGreaterThanOrEqual(29 + 8);
    expect(short.path).toMatch(/^M4 4h1v1h-1z/); // the finder pattern's corner
    expect(qrPath("x").path).not.toBe(short.path);
  });

  it("reads the /v1/devices answers and says when a device was last seen", () => {
    expect(parsePairCode({ code: "1234-5678", expires_at: 10, remote_url: "http://h:8766", role: "write" })).toEqual({ code: "1234-5678", expires_at: 10, remote_url: "http://h:8766", role: "write" });
    const list = parseDeviceList({ devices: [{ id: "d1", name: "phone", role: "read", created: 1, last_seen: null }, { name: "no id" }], remote_url: null });
    expect(list).toEqual({ devices: [{ id: "d1", name: "phone", role: "read", created: 1, last_seen: null, revoked: null }], remote_url: null, problem: null });
    expect(parseRevoked({ revoked: [{ id: "d1" }] }).revoked).toHaveLength(1);
    const now = 1_000_000_000;
    expect(lastSeen(null, now)).toBe("never");
    expect(lastSeen(now / 1000 - 30, now)).toBe("just now");
    expect(lastSeen(now / 1000 - 600, now)).toBe("10 min ago");
    expect(lastSeen(now / 1000 - 90_000, now)).toBe("yesterday");
  });
});
