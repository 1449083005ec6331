/**
 * `AbortSignal.any` for older Obsidian installers: it needs Chromium 116 (Electron 26), while
 * the manifest's minAppVersion admits app versions that may run on an older installer.
 */
export interface LinkedSignal {
  signal: AbortSignal;
  /** Remove the listeners from the inputs (they may live much longer than one request). */
  dispose(): void;
}

/** A signal that aborts, with the same reason, as soon as any of `signals` does. */
export function anySignal(signals: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listeners = signals.map((signal) => {
    const listener = () => {
      controller.abort(signal.reason);
      dispose();
    };
    signal.addEventListener("abort", listener, { once: true });
    return { signal, listener };
  });
  const dispose = () => {
    for (const { signal, listener } of listeners) signal.removeEventListener("abort", listener);
  };
  return { signal: controller.signal, dispose };
}
