/** Byte streams for SSE tests: chunks exactly as given, optionally kept open. */
export function streamOf(chunks: (string | Uint8Array)[], options: { keepOpen?: boolean } = {}) {
  const encoder = new TextEncoder();
  let cancelled: unknown = undefined;
  let wasCancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      if (!options.keepOpen) controller.close();
    },
    cancel(reason) {
      wasCancelled = true;
      cancelled = reason;
    },
  });
  return {
    stream,
    get cancelled() {
      return wasCancelled;
    },
    get reason() {
      return cancelled;
    },
  };
}

/** Every byte of `text` as its own chunk. */
export function byteChunks(text: string): Uint8Array[] {
  return Array.from(new TextEncoder().encode(text), (b) => Uint8Array.of(b));
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
