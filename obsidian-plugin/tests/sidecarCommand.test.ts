/** `sidecar/command.ts`: the command line of the sidecar, its token command and the handshake. */
import { describe, expect, it } from "vitest";

import {
  CommandSyntaxError,
  defaultServeCommand,
  parseHandshake,
  quoteArg,
  serveCommandLine,
  splitCommand,
  tokenCommand,
  tokenFromOutput,
} from "../src/sidecar/command";

describe("splitCommand", () => {
  it("splits like a POSIX shell, without expanding anything", () => {
    expect(splitCommand("vault-rag serve --vault /home/me/vault")).toEqual(["vault-rag", "serve", "--vault", "/home/me/vault"]);
    expect(splitCommand('  a  "b c"  \'d "e"\' f\\ g  ')).toEqual(["a", "b c", 'd "e"', "f g"]);
    // In "…" a backslash escapes only \ " $ `: `\n` stays a backslash and an n.
    expect(splitCommand('x "a\\"b\\\\c\\$d\\n" y')).toEqual(["x", 'a"b\\c$d\\n', "y"]);
    expect(splitCommand("$HOME/bin/vault-rag ~ *.md")).toEqual(["$HOME/bin/vault-rag", "~", "*.md"]);
    expect(splitCommand('a""b \'\'')).toEqual(["ab", ""]);
    expect(splitCommand("")).toEqual([]);
  });

  it("refuses an unclosed quote or a trailing backslash", () => {
    for (const bad of ['a "b', "a 'b", "a \\"]) expect(() => splitCommand(bad)).toThrow(CommandSyntaxError);
  });

  it("reads back every argument quoteArg wrote", () => {
    const samples = ["/home/me/My Vault", 'a"b', "$x`y`", "back\\slash", "中文 笔记", "plain", "it's", "tab\there", ""];
    for (const arg of samples) expect(splitCommand(`vault-rag serve --vault ${quoteArg(arg)}`)).toEqual(["vault-rag", "serve", "--vault", arg]);
  });
});

describe("the commands", () => {
  it("defaults to serve on this vault, with the port when the URL names another", () => {
    expect(defaultServeCommand("/home/me/vault")).toBe("vault-rag serve --vault /home/me/vault");
    expect(defaultServeCommand("/home/me/My Vault", "http://127.0.0.1:9000")).toBe('vault-rag serve --vault "/home/me/My Vault" --port 9000');
    expect(defaultServeCommand(null)).toBe("vault-rag serve --vault /path/to/your/vault");
    expect(serveCommandLine("  /opt/rag/bin/vault-rag serve --vault /v  ", "/x", "http://127.0.0.1:8765")).toBe("/opt/rag/bin/vault-rag serve --vault /v");
    expect(serveCommandLine(" ", "/x", "http://127.0.0.1:8765")).toBe("vault-rag serve --vault /x --port 0"); // a free port per vault
    expect(serveCommandLine("", "/My Vault")).toBe('vault-rag serve --vault "/My Vault" --port 0');
  });

  it("reads the token for the same vault and data dir as the serve command", () => {
    expect(tokenCommand(splitCommand("vault-rag serve --vault /v --port 9000 --log-level debug"))).toEqual(["vault-rag", "token", "--vault", "/v"]);
    expect(tokenCommand(splitCommand('/venv/bin/python -m vault_rag serve --data-dir "/d d" --vault=/v --port 1'))).toEqual([
      "/venv/bin/python",
      "-m",
      "vault_rag",
      "token",
      "--data-dir",
      "/d d",
      "--vault=/v",
    ]);
    expect(tokenCommand(["./start-sidecar.sh"])).toBeNull(); // a wrapper: only its handshake can tell
    expect(tokenCommand(["serve"])).toBeNull();
  });
});

describe("the handshake", () => {
  const token = "abcdefghijklmnop_QRSTUVWXYZ-0123456789";

  it("is one line of JSON after its prefix", () => {
    expect(parseHandshake(`vault-rag-handshake {"url": "http://127.0.0.1:8765", "token": "${token}", "version": "0.1.0"}`)).toEqual({
      url: "http://127.0.0.1:8765",
      token,
    });
    for (const other of ["", token, "vault-rag-handshake {", 'vault-rag-handshake {"token": "short"}', `INFO vault-rag-handshake {"token": "${token}"}`]) {
      expect(parseHandshake(other)).toBeNull();
    }
  });

  it("takes the token from vault-rag token's last line", () => {
    expect(tokenFromOutput(`new token saved\n${token}\n`)).toBe(token);
    expect(tokenFromOutput("Error: no vault\n")).toBeNull();
    expect(tokenFromOutput("")).toBeNull();
  });
});
