/**
 * Plain DOM building, with no Obsidian helpers (`createDiv`, `setText`…): the pane runs the same
 * in Obsidian, in happy-dom under vitest and in a plain browser page. Elements are created in
 * the container's own document (Obsidian pop-out windows have their own).
 */

export interface ElementSpec {
  cls?: string;
  text?: string;
  testid?: string;
  attrs?: Record<string, string>;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  parent: HTMLElement,
  tag: K,
  spec: ElementSpec = {},
): HTMLElementTagNameMap[K] {
  const el = parent.ownerDocument.createElement(tag);
  if (spec.cls) el.className = spec.cls;
  if (spec.text !== undefined) el.textContent = spec.text;
  if (spec.testid) el.setAttribute("data-testid", spec.testid);
  for (const [name, value] of Object.entries(spec.attrs ?? {})) el.setAttribute(name, value);
  parent.appendChild(el);
  return el;
}

export function show(el: HTMLElement, visible: boolean): void {
  el.hidden = !visible;
}

export function clear(el: HTMLElement): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}
