/**
 * "Connect to your desktop": the first screen of the plugin on a phone (and the way back after a
 * revocation). The desktop's Settings → Vault RAG → Pair a device shows an address, a code and a
 * QR code; scanning the QR code with the phone's camera opens `obsidian://vault-rag-pair?…`,
 * which pairs without typing (`main.ts`'s protocol handler). Here the address and code can be
 * typed instead. Plain DOM (`dom.ts`), so it runs in happy-dom and in the browser test.
 *
 * Stable `data-testid`s: connect-form, connect-url, connect-code, connect-name, connect-submit,
 * connect-message.
 */
import { h } from "./dom";

/** What the form needs from the plugin (`remote/mobile.ts`). */
export interface RemoteConnect {
  /** This device's pairing, or null when it has none. */
  paired(): { url: string; name: string } | null;
  /** Pair with the desktop's remote listener; rejects with a message for people. */
  pair(url: string, code: string, name: string): Promise<void>;
  /** A name for this device the desktop's list shows. */
  defaultName(): string;
}

export class ConnectForm {
  readonly el: HTMLFormElement;
  private readonly url: HTMLInputElement;
  private readonly code: HTMLInputElement;
  private readonly name: HTMLInputElement;
  private readonly submit: HTMLButtonElement;
  private readonly message: HTMLElement;

  constructor(
    parent: HTMLElement,
    private readonly remote: RemoteConnect,
    private readonly paired: () => void,
  ) {
    this.el = h(parent, "form", { cls: "vault-rag-connect", testid: "connect-form", attrs: { "aria-label": "Connect to your desktop" } });
    const field = (label: string, testid: string, attrs: Record<string, string>) => {
      const row = h(this.el, "label", { cls: "vault-rag-connect-field" });
      h(row, "span", { text: label });
      return h(row, "input", { testid, attrs });
    };
    const known = remote.paired();
    this.url = field("Desktop address", "connect-url", { type: "url", placeholder: "http://192.168.1.20:8766", autocomplete: "off", inputmode: "url" });
    this.url.value = known?.url ?? "";
    this.code = field("Pairing code", "connect-code", { type: "text", placeholder: "1234-5678", autocomplete: "one-time-code", inputmode: "numeric" });
    this.name = field("This device's name", "connect-name", { type: "text", autocomplete: "off", maxlength: "64" });
    this.name.value = known?.name ?? remote.defaultName();
    this.submit = h(this.el, "button", { cls: "mod-cta", text: "Connect", testid: "connect-submit", attrs: { type: "submit" } });
    this.message = h(this.el, "div", { cls: "vault-rag-connect-message", testid: "connect-message", attrs: { "aria-live": "polite" } });
    this.el.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.connect();
    });
  }

  /** Fill the form (a link arrived while the pane was open). */
  fill(url: string, code: string): void {
    this.url.value = url;
    this.code.value = code;
  }

  async connect(): Promise<void> {
    this.submit.disabled = true;
    this.message.textContent = "Pairing with the desktop…";
    this.message.classList.remove("mod-warning");
    try {
      await this.remote.pair(this.url.value, this.code.value, this.name.value.trim() || this.remote.defaultName());
      this.code.value = "";
      this.message.textContent = "Paired.";
      this.paired();
    } catch (error) {
      this.message.textContent = error instanceof Error ? error.message : String(error);
      this.message.classList.add("mod-warning");
    } finally {
      this.submit.disabled = false;
    }
  }
}
