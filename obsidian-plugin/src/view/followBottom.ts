/**
 * Keeps the newest answer of a scrolling list in view: the function returned (call it for a new
 * turn) jumps to the bottom, and while an answer streams the list follows it, unless the user has scrolled up to read
 * something else (more than `slackPx` from the bottom).
 */
export function followBottom(el: HTMLElement, slackPx = 48): () => void {
  let following = true;
  el.addEventListener("scroll", () => {
    following = el.scrollHeight - el.scrollTop - el.clientHeight < slackPx;
  });
  // Without a MutationObserver (old test DOMs) nothing follows; new turns still scroll.
  if (typeof MutationObserver !== "undefined") {
    new MutationObserver(() => {
      if (following) el.scrollTop = el.scrollHeight;
    }).observe(el, { childList: true, subtree: true, characterData: true });
  }
  return () => {
    following = true;
    el.scrollTop = el.scrollHeight;
  };
}
