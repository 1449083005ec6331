/**
 * Scripts run inside the page of the end-to-end tests.
 *
 * Runs in the page before its own scripts (`page.addInitScript`): records every state the
 * progress line and the answer of the latest turn go through (a MutationObserver sees each
 * change the pane makes, however fast the stream ends), with times. Plain JavaScript in a
 * string, so no transpiler helper leaks into the page.
 */
export const RECORDER_SCRIPT = `
(() => {
  const e2e = { progress: [], answers: [], events: [], final: null, t0: performance.now() };
  window.__e2e = e2e;
  const last = (list) => (list.length ? list[list.length - 1].text : null);
  const take = () => {
    const turns = document.querySelectorAll('[data-testid="turn"]');
    const turn = turns[turns.length - 1];
    if (!turn) return;
    const t = Math.round(performance.now() - e2e.t0);
    const progress = turn.querySelector('[data-testid="progress"]');
    const answer = turn.querySelector('[data-testid="answer"]');
    const p = progress ? progress.textContent : "";
    const a = answer ? answer.textContent : "";
    if (p !== last(e2e.progress)) e2e.progress.push({ t, text: p });
    if (a !== last(e2e.answers)) e2e.answers.push({ t, text: a });
  };
  new MutationObserver(take).observe(document, { subtree: true, childList: true, characterData: true });
})();
`;

/**
 * Runs in the page once it is mounted (again after a reload: a new page has a new client): wraps
 * the pane's client so every request (in \`requests\`) and every stream event the pane receives
 * is also recorded (type, time, delta length, the final answer and its id).
 */
export const STREAM_TAP_SCRIPT = `
(() => {
  const e2e = window.__e2e;
  const client = window.vaultRag.client;
  if (client.__tapped) return true;
  client.__tapped = true;
  e2e.requests = e2e.requests || [];
  const ask = client.ask.bind(client);
  client.ask = async function* (request, signal) {
    e2e.requests.push(JSON.parse(JSON.stringify(request)));
    for await (const event of ask(request, signal)) {
      const t = Math.round(performance.now() - e2e.t0);
      const entry = { type: event.type, t };
      if (event.type === "delta") entry.chars = event.text.length;
      if (event.type === "progress") entry.node = event.node;
      if (event.type === "final") e2e.final = { answer: event.answer, answerId: event.answerId, citations: event.citations };
      if (event.type === "error") entry.message = event.message;
      e2e.events.push(entry);
      yield event;
    }
  };
  return true;
})()
`;

/** A selector for the pane's elements by their `data-testid`. */
export const sel = (testid: string): string => `[data-testid="${testid}"]`;

/** Until the last turn's progress line says "done · N sources" (or "failed"), for
 * `page.waitForFunction`. */
export const LAST_TURN_DONE = `(() => {
  const lines = document.querySelectorAll('[data-testid="progress"]');
  const line = lines.length ? lines[lines.length - 1].textContent : "";
  return line.startsWith("done") || line === "failed";
})()`;
