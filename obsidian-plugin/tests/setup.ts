// Obsidian code uses `window.setTimeout` & co. (popout-window safe); under Node, `window` is
// the global object, so vitest's fake timers still replace what it calls.
const g = globalThis as { window?: unknown };
g.window ??= globalThis;
