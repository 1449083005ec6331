/**
 * A Server-Sent Events parser over a byte stream, following the WHATWG "event stream
 * interpretation" rules: lines end in CRLF, LF or CR (a CR at the end of one chunk and the LF
 * at the start of the next are one line end); `:` lines are comments (keep-alive pings); a
 * message is dispatched on a blank line, its `data:` lines joined with "\n"; a message without
 * data is dropped; an unfinished message at the end of the stream is discarded. Bytes are
 * decoded as streaming UTF-8, so a character split across chunks (every CJK character is three
 * bytes) comes out whole; a leading BOM is skipped.
 */

export interface SSEMessage {
  /** The `event:` field, "message" when the message had none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen on the stream, "" when none. */
  id: string;
}

const LINE_END = /[\r\n]/g;

/**
 * The messages of `stream`, in order. Aborting `signal` cancels the stream and rejects with the
 * signal's reason; stopping the iteration early (`break`) cancels the stream too.
 */
export async function* parseSSE(
  stream: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SSEMessage, void, undefined> {
  const reader = stream.getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder("utf-8");
  const state = new MessageBuilder();
  let buffer = "";
  let skipLF = false; // the previous chunk ended in CR: a leading LF belongs to that line end
  let finished = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { value, done } = await reader.read();
      signal?.throwIfAborted();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let pos = 0;
      for (;;) {
        if (skipLF && pos < buffer.length) {
          if (buffer[pos] === "\n") pos++;
          skipLF = false;
        }
        LINE_END.lastIndex = pos;
        const match = LINE_END.exec(buffer);
        if (match === null) break;
        const end = match.index;
        const line = buffer.slice(pos, end);
        pos = end + 1;
        if (buffer[end] === "\r") {
          if (pos < buffer.length) {
            if (buffer[pos] === "\n") pos++;
          } else {
            skipLF = true;
          }
        }
        const message = state.line(line);
        if (message !== null) yield message;
      }
      buffer = buffer.slice(pos);
      if (done) {
        finished = true;
        return; // a message without its closing blank line is discarded, as browsers do
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The field-by-field state of the message being read. */
class MessageBuilder {
  private event = "";
  private data: string[] = [];
  private lastId = "";

  /** Feed one line (without its line end); a complete message comes back on a blank line. */
  line(line: string): SSEMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // comment / keep-alive
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      default:
        break; // `retry` and unknown fields: nothing to do for a fetch-based reader
    }
    return null;
  }

  private dispatch(): SSEMessage | null {
    const message =
      this.data.length === 0 ? null : { event: this.event || "message", data: this.data.join("\n"), id: this.lastId };
    this.event = "";
    this.data = [];
    return message;
  }
}
