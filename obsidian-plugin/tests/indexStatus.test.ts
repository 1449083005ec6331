// @vitest-environment happy-dom
/**
 * Index progress in the ask pane and its empty state: the texts on their own, then through the
 * `AskView` on the shim — the index line and the active note's state from `GET /v1/status?path=`,
 * the empty state while the conversation is empty, and, with the sidecar down, the command
 * that starts it on this vault and "Try again".
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { SidecarAuthError, SidecarUnreachableError } from "../src/client";
import { describeIndex, describeNote, serveCommand } from "../src/view/indexStatus";
import * as shim from "./__mocks__/obsidian";
import { ask, setup, statusOf, TextEditor } from "./helpers/askView";

afterEach(() => {
  document.body.innerHTML = "";
});

describe("the texts", () => {
  it("quote the vault folder in the command only when the shell needs it", () => {
    expect(serveCommand("/home/me/vault")).toBe("vault-rag serve --vault /home/me/vault");
    expect(serveCommand("/home/me/My Vault")).toBe('vault-rag serve --vault "/home/me/My Vault"');
    expect(serveCommand('/v/a"$b')).toBe('vault-rag serve --vault "/v/a\\"\\$b"');
    expect(serveCommand(null)).toBe("vault-rag serve --vault /path/to/your/vault");
  });

  it("say how far the index is and where the active note stands", () => {
    expect(describeIndex(statusOf(1))).toBe("1 note indexed");
    expect(describeIndex(statusOf(24, 40))).toBe("24 notes indexed · 40 passages waiting for vectors, about 2 min left");
    expect(describeNote({ path: "C++/UObject 与 GC.md", indexed: true, chunks: 5, embedded: 5, pending: 0 })).toBe("“UObject 与 GC” is indexed");
    expect(describeNote({ path: "A.md", indexed: true, chunks: 5, embedded: 3, pending: 2 })).toBe("“A” is indexed; 2 of 5 passages still waiting for vectors");
    expect(describeNote({ path: "A.md", indexed: false, chunks: 0, embedded: 0, pending: 0 })).toBe("“A” is not indexed yet");
    expect(describeNote(null)).toBeNull();
  });
});

describe("in the pane", () => {
  it("shows the index and the last active note, and the empty state until a question is asked", async () => {
    const ctx = setup();
    ctx.statusReply.current = statusOf(24, 40);
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.q("index-status").textContent).toBe("24 notes indexed · 40 passages waiting for vectors, about 2 min left"));
    expect(ctx.client.status.mock.calls.at(-1)?.[0]).toBe("Notes/Draft.md");
    expect(ctx.q("note-status").textContent).toBe("“Draft” is indexed");
    expect(ctx.q("empty-state").hidden).toBe(false);
    expect(ctx.q("empty-title").textContent).toBe("Ask your vault");
    expect(ctx.q("empty-command").parentElement?.hidden).toBe(true);

    await ask(ctx, "What is Lumen?");
    expect(ctx.q("empty-state").hidden).toBe(true);
    ctx.q("new-conversation").click();
    expect(ctx.q("empty-state").hidden).toBe(false);

    // Another note becomes active: the pane asks about that one.
    const leaf = new shim.WorkspaceLeaf(ctx.app);
    new shim.MarkdownView(leaf, new TextEditor(), new shim.TFile("Rendering/Lumen.md"));
    ctx.statusReply.current = statusOf(24, 0, { path: "Rendering/Lumen.md", indexed: false, chunks: 0, embedded: 0, pending: 0 });
    ctx.activate(leaf);
    await vi.waitFor(() => expect(ctx.q("note-status").textContent).toBe("“Lumen” is not indexed yet"));
    expect(ctx.client.status.mock.calls.at(-1)?.[0]).toBe("Rendering/Lumen.md");
    expect(ctx.q("index-status").textContent).toBe("24 notes indexed");
  });

  it("says how to start the sidecar when it is down, with this vault's folder, and tries again", async () => {
    const ctx = setup();
    ctx.statusReply.current = new SidecarUnreachableError("http://127.0.0.1:8765", new Error("refused"));
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.q("empty-title").textContent).toBe("The Vault RAG sidecar is not running"));
    expect(ctx.q("empty-state").textContent).toContain("Nothing answers at http://127.0.0.1:8765. Start it in a terminal");
    expect(ctx.q("empty-command").textContent).toBe('vault-rag serve --vault "/home/me/My Vault"');
    expect(ctx.q("empty-command").parentElement?.hidden).toBe(false);
    expect(ctx.q("index-status").hidden).toBe(true);
    expect(ctx.q("note-status").hidden).toBe(true);

    const writeText = vi.fn(async (_text: string) => undefined);
    vi.spyOn(navigator, "clipboard", "get").mockReturnValue({ writeText } as unknown as Clipboard);
    ctx.q("empty-copy").click();
    expect(writeText).toHaveBeenCalledWith('vault-rag serve --vault "/home/me/My Vault"');

    ctx.statusReply.current = statusOf(3);
    ctx.q("empty-retry").click();
    await vi.waitFor(() => expect(ctx.q("empty-title").textContent).toBe("Ask your vault"));
    expect(ctx.q("empty-retry").hidden).toBe(true);
    expect(ctx.q("index-status").textContent).toBe("3 notes indexed");
  });

  it("a failed question that finds the sidecar gone turns the empty state into the start command", async () => {
    const ctx = setup();
    ctx.statusReply.current = new SidecarAuthError("http://127.0.0.1:8765");
    await ctx.view.onOpen();
    await vi.waitFor(() => expect(ctx.q("empty-title").textContent).toBe("The sidecar refused the token"));
    ctx.statusReply.current = statusOf(3);
    await ctx.view.poller?.poll();
    const feed = await ask(ctx, "q");
    feed.end(new SidecarUnreachableError("http://127.0.0.1:8765", new Error("reset")));
    await vi.waitFor(() => expect(ctx.q("error").textContent).toMatch(/^Cannot reach the Vault RAG sidecar/));
    ctx.q("new-conversation").click();
    expect(ctx.q("empty-title").textContent).toBe("The Vault RAG sidecar is not running");
  });
});
