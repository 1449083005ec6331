import { vi } from "vitest";

import { TurnView, type TurnActions } from "../../src/view/turn";

/**
 * One turn in `document.body`, as the pane makes it, for the citation tests: every action a
 * no-op (`openNote` a spy) unless `overrides` gives it, markdown rendered as plain text with each
 * call recorded in `rendered`, and a clock that never waits.
 */
export function testTurn(question: string, overrides: Partial<TurnActions> = {}) {
  const actions: TurnActions = {
    openNote: vi.fn(),
    feedback: async () => ({}),
    promote: async () => "",
    openSavedNote: () => undefined,
    describeError: (error) => String((error as Error).message),
    copy: async () => undefined,
    insert: () => null,
    regenerate: () => undefined,
    edit: () => undefined,
    ...overrides,
  };
  const rendered: string[] = [];
  const view = new TurnView(document.body, question, {
    render: async (markdown, el) => {
      rendered.push(markdown);
      el.textContent = markdown;
      return () => undefined;
    },
    actions,
    clock: { now: () => 0, setTimeout: () => 0, clearTimeout: () => undefined },
    renderIntervalMs: 0,
  });
  return { view, actions, rendered };
}
