/**
 * The command line that starts the sidecar, without any process: splitting the setting into
 * arguments (POSIX-shell quoting, no expansion: the command is run directly, never by a
 * shell), the default `vault-rag serve --vault <this vault's folder>`, the `vault-rag token`
 * command that goes with it, and the handshake line `vault-rag serve` prints on stdout when
 * `VAULT_RAG_HANDSHAKE=1` (its URL and token, so nobody has to paste the token).
 */

export const DEFAULT_PORT = 8765;
/** Set in the child's environment: `vault-rag serve` then prints the handshake line. */
export const HANDSHAKE_ENV = "VAULT_RAG_HANDSHAKE";
export const HANDSHAKE_PREFIX = "vault-rag-handshake ";

export class CommandSyntaxError extends Error {
  override name = "CommandSyntaxError";
}

/** `text` as arguments, the way a POSIX shell splits it: whitespace separates, '…' quotes
 * literally, "…" quotes with \\ escaping \\ " $ `, a \\ outside quotes escapes the next
 * character. Nothing is expanded. */
export function splitCommand(text: string): string[] {
  const args: string[] = [];
  let current = "";
  let inArg = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      if (inArg) args.push(current);
      current = "";
      inArg = false;
      i++;
      continue;
    }
    inArg = true;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new CommandSyntaxError("a ' quote is not closed");
      current += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new CommandSyntaxError('a " quote is not closed');
        const d = text[i] as string;
        if (d === '"') break;
        if (d === "\\" && i + 1 < text.length && '\\"$`'.includes(text[i + 1] as string)) {
          current += text[i + 1];
          i += 2;
        } else {
          current += d;
          i++;
        }
      }
      i++;
    } else if (c === "\\") {
      if (i + 1 >= text.length) throw new CommandSyntaxError("the command ends with a \\");
      current += text[i + 1];
      i += 2;
    } else {
      current += c;
      i++;
    }
  }
  if (inArg) args.push(current);
  return args;
}

/** One argument as a shell would need it written (quoted when it has to be). */
export function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, "\\$1")}"`;
}

/** The port of a sidecar URL (8765 when it names none, 80/443 by scheme otherwise). */
function portOf(url: string): number {
  try {
    const parsed = new URL(url);
    if (parsed.port) return Number(parsed.port);
    return parsed.protocol === "https:" ? 443 : 80;
  } catch {
    return DEFAULT_PORT;
  }
}

/** `vault-rag serve --vault <folder>` (and `--port N` when the URL is not on the default port). */
export function defaultServeCommand(vaultPath: string | null, url = `http://127.0.0.1:${DEFAULT_PORT}`): string {
  const vault = vaultPath ? quoteArg(vaultPath) : "/path/to/your/vault";
  const port = portOf(url);
  return `vault-rag serve --vault ${vault}${port === DEFAULT_PORT ? "" : ` --port ${port}`}`;
}

/** What the plugin runs when the setting is empty: `vault-rag serve --vault <folder> --port 0`,
 * a free port per vault (said in the handshake), so two vaults' sidecars run side by side. */
export function launchCommand(vaultPath: string | null): string {
  return `vault-rag serve --vault ${vaultPath ? quoteArg(vaultPath) : "/path/to/your/vault"} --port 0`;
}

/** The command to run: the setting when it has one, else `launchCommand`. `url` is kept for
 * callers of the earlier signature (the port now comes from the handshake). */
export function serveCommandLine(setting: string, vaultPath: string | null, url?: string): string {
  void url;
  return setting.trim() || launchCommand(vaultPath);
}

const KEPT_OPTIONS = new Set(["--vault", "--data-dir"]);

/**
 * `vault-rag token` for the same vault and data dir as a `… serve …` command: the words before
 * `serve` (the program, maybe `python -m vault_rag`), `token`, and the `--vault` and
 * `--data-dir` options of the serve command. Null when the command has no `serve` word (a
 * wrapper script: only its handshake can give the token).
 */
export function tokenCommand(serve: string[]): string[] | null {
  const at = serve.indexOf("serve");
  if (at < 1) return null;
  const out = [...serve.slice(0, at), "token"];
  const rest = serve.slice(at + 1);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    const eq = arg.indexOf("=");
    if (eq > 0 && KEPT_OPTIONS.has(arg.slice(0, eq))) out.push(arg);
    else if (KEPT_OPTIONS.has(arg) && i + 1 < rest.length) out.push(arg, rest[++i] as string);
  }
  return out;
}

export interface Handshake {
  url: string;
  token: string;
}

/** The handshake of one stdout line, or null for any other line. */
export function parseHandshake(line: string): Handshake | null {
  if (!line.startsWith(HANDSHAKE_PREFIX)) return null;
  try {
    const data = JSON.parse(line.slice(HANDSHAKE_PREFIX.length)) as Record<string, unknown>;
    if (typeof data.token !== "string" || data.token.length < 16) return null;
    return { url: typeof data.url === "string" ? data.url : "", token: data.token };
  } catch {
    return null;
  }
}

/** The token `vault-rag token` printed: its last non-empty line. */
export function tokenFromOutput(stdout: string): string | null {
  const line = stdout.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).pop() ?? "";
  return /^[\w-]{16,}$/.test(line) ? line : null;
}

/** The serve command with `--remote-listen LISTEN` for "Allow other devices" (null: as it is;
 * a command that already names a remote listener is left alone). */
export function withRemoteListen(command: string, listen: string | null): string {
  if (listen === null || /(^|\s)--remote-listen(\s|=|$)/.test(command)) return command;
  return `${command} --remote-listen ${quoteArg(listen)}`;
}
