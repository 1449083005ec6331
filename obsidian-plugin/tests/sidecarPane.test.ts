// @vitest-environment happy-dom
/**
 * The empty ask pane and the sidecar's supervisor (`AskView` on the shim): with the sidecar down
 * on a desktop app, "Start the sidecar" starts it (the supervisor's state drives the text:
 * starting, failed with its message, then the pane as usual), "Show log" opens the log modal;
 * with the sidecar up, example questions from the vault's headings, which ask when clicked.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { SidecarUnreachableError } from "../src/client";
import { describeSupervisor, SidecarLogModal } from "../src/sidecar/logModal";
import { SidecarLog, type SupervisorState } from "../src/sidecar/supervisor";
import type { SidecarLaunch } from "../src/view/indexStatus";
import * as shim from "./__mocks__/obsidian";
import { setup, statusOf } from "./helpers/askView";

afterEach(() => {
  document.body.innerHTML = "";
});

/** The supervisor as the view sees it, its state set by the test. */
function launch(canStart = true) {
  const listeners = new Set<() => void>();
  let state: SupervisorState = { kind: "idle" };
  const controls: SidecarLaunch & { set(next: SupervisorState): void } = {
    canStart,
    state: () => state,
    start: vi.fn(),
    showLog: vi.fn(),
    command: () => "/opt/rag/bin/vault-rag serve --vault /v",
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(next) {
      state = next;
      for (const listener of listeners) listener();
    },
  };
  return controls;
}

describe("starting the sidecar from the empty pane", () => {
  it("offers to start it, then follows the supervisor: starting, failed, running", async () => {
    const sidecar = launch();
    const ctx = setup({}, {}, [], { sidecar });
    ctx.statusReply.current = new SidecarUnreachableError("http://127.0.0.1:8765", new Error("refused"));
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.q("empty-title").textContent).toBe("The Vault RAG sidecar is not running"));
    expect(ctx.q("empty-text").textContent).toBe("Nothing answers at http://127.0.0.1:8765. Start it here, or in a terminal:");
    expect(ctx.q("empty-command").textContent).toBe("/opt/rag/bin/vault-rag serve --vault /v"); // the configured command
    expect(ctx.q("empty-start").hidden).toBe(false);
    expect(ctx.q("empty-log").hidden).toBe(true);
    ctx.q("empty-start").click();
    expect(sidecar.start).toHaveBeenCalledOnce();

    sidecar.set({ kind: "starting" });
    expect(ctx.q("empty-title").textContent).toBe("Starting the sidecar…");
    expect(ctx.q("empty-start").hidden).toBe(true);
    expect(ctx.q("empty-command").parentElement?.hidden).toBe(true);
    expect(ctx.q("empty-log").hidden).toBe(false);
    ctx.q("empty-log").click();
    expect(sidecar.showLog).toHaveBeenCalledOnce();

    sidecar.set({ kind: "failed", message: "The sidecar exited with code 1. See its log." });
    expect(ctx.q("empty-title").textContent).toBe("The sidecar could not be started");
    expect(ctx.q("empty-text").textContent).toBe("The sidecar exited with code 1. See its log. Start it again, or in a terminal:");
    expect(ctx.q("empty-start").hidden).toBe(false);

    sidecar.set({ kind: "running", ours: true, tokenProblem: null });
    ctx.statusReply.current = statusOf(5);
    await ctx.view.poller?.poll();
    expect(ctx.q("empty-title").textContent).toBe("Ask your vault");
    expect(ctx.q("empty-log").hidden).toBe(true);
    await ctx.view.onClose(); // unsubscribed: a later change renders nothing
    sidecar.set({ kind: "stopped" });
  });

  it("without a launcher (mobile) only the command for a terminal is offered", async () => {
    const ctx = setup({}, {}, [], { sidecar: launch(false) });
    ctx.statusReply.current = new SidecarUnreachableError("http://127.0.0.1:8765", new Error("refused"));
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.q("empty-title").textContent).toBe("The Vault RAG sidecar is not running"));
    expect(ctx.q("empty-start").hidden).toBe(true);
    expect(ctx.q("empty-text").textContent).toMatch(/Start it in a terminal, then try again:$/);
  });
});

describe("the log modal", () => {
  it("shows the log, follows new lines while open and says the supervisor's state", () => {
    const log = new SidecarLog();
    log.write("err", "INFO: Started server process\nINFO: Waiting");
    let state: SupervisorState = { kind: "starting" };
    const modal = new SidecarLogModal({} as never, log, () => state);
    modal.open();
    const q = (id: string) => document.querySelector(`[data-testid="${id}"]`) as HTMLElement;
    expect(q("sidecar-log").textContent).toBe("INFO: Started server process");
    expect(q("sidecar-log-state").textContent).toBe("Starting the sidecar…");
    state = { kind: "running", ours: true, tokenProblem: null };
    log.write("err", " for application startup.\n");
    expect(q("sidecar-log").textContent).toBe("INFO: Started server process\nINFO: Waiting for application startup.");
    expect(q("sidecar-log-state").textContent).toBe("Running (started by this plugin).");
    modal.close();
    expect(document.querySelector('[data-testid="sidecar-log"]')).toBeNull();
    log.note("after closing"); // no listener left
    expect(describeSupervisor({ kind: "running", ours: false, tokenProblem: "Refused." })).toBe(
      "A sidecar started elsewhere answers; the plugin uses it. Refused.",
    );
  });
});

describe("example questions", () => {
  it("come from the vault's headings and ask when clicked", async () => {
    const ctx = setup();
    const files = [new shim.TFile("Rendering/Lumen.md", { mtime: 20, size: 1 }), new shim.TFile("C++/UObject 与 GC.md", { mtime: 30, size: 1 })];
    ctx.app.vault.getMarkdownFiles.mockReturnValue(files);
    ctx.app.metadataCache.getFileCache.mockImplementation((file: shim.TFile) =>
      file.path === "Rendering/Lumen.md"
        ? { headings: [{ heading: "Lumen", level: 1 }, { heading: "Hardware ray tracing", level: 2 }] }
        : { headings: [{ heading: "UObject 与 GC", level: 1 }, { heading: "TObjectPtr 与 GC", level: 2 }] },
    );
    ctx.statusReply.current = statusOf(24);
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.qa("empty-example")).toHaveLength(2));
    expect(ctx.qa("empty-example").map((el) => el.textContent)).toEqual([
      "笔记里关于「TObjectPtr 与 GC」写了什么？",
      "What do my notes say about Hardware ray tracing?",
    ]);
    expect(ctx.q("empty-text").textContent).toBe("Answers come from your notes, with the passages they cite. For example:");
    (ctx.qa("empty-example")[1] as HTMLButtonElement).click();
    await vi.waitFor(() => expect(ctx.feeds).toHaveLength(1));
    expect(ctx.feeds[0]?.request?.question).toBe("What do my notes say about Hardware ray tracing?");
    expect(ctx.q("empty-state").hidden).toBe(true);
  });

  it("are not offered while the index is empty", async () => {
    const ctx = setup();
    ctx.app.vault.getMarkdownFiles.mockReturnValue([new shim.TFile("A.md", { mtime: 1, size: 1 })]);
    ctx.app.metadataCache.getFileCache.mockReturnValue({ headings: [{ heading: "Enhanced Input", level: 2 }] });
    ctx.statusReply.current = statusOf(0);
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.q("empty-text").textContent).toMatch(/^The index is empty so far/));
    expect(ctx.q("empty-examples").hidden).toBe(true);
  });
});
