/**
 * The settings tab's "Sources beside the vault": the sources the sidecar indexes beside the
 * vault (`GET /v1/collections`), each with Remove (`DELETE /v1/sources/{name}`), and a form to
 * add a web source — online documentation, crawled only from its start URL's origin and folder
 * (`POST /v1/sources`). The sidecar checks the request as `vault-rag sources add` does and
 * starts indexing it at once.
 */
import { Setting } from "obsidian";

import type { CollectionList } from "./client/collections";
import { type SourceAdd, type SourceAdded, webSourceBody, type WebSourceForm } from "./client/sources";
import { clear, h } from "./view/dom";

/** What the section needs of the plugin (`services.ts`). */
export interface SourcesControls {
  list(): Promise<CollectionList>;
  add(body: SourceAdd): Promise<SourceAdded>;
  remove(name: string): Promise<unknown>;
}

export function displaySourcesSection(containerEl: HTMLElement, sources: SourcesControls): void {
  new Setting(containerEl).setName("Sources beside the vault").setHeading();
  const listEl = h(containerEl, "div", { cls: "vault-rag-sources", testid: "sources" });
  const refresh = async () => {
    clear(listEl);
    try {
      const list = await sources.list();
      const others = list.collections.filter((c) => !c.primary);
      if (others.length === 0) new Setting(listEl).setName("No sources").setDesc("Only the vault is indexed.");
      for (const source of others) {
        const state = source.problem ?? (source.indexed ? `${source.files} pages or files, ${source.chunks} passages` : "indexing…");
        new Setting(listEl)
          .setName(`${source.name} (${source.kind})`)
          .setDesc(`${source.path} · ${state}`)
          .addButton((button) =>
            button.setButtonText("Remove").onClick(async () => {
              try {
                await sources.remove(source.name);
              } catch (error) {
                status.setDesc(messageOf(error));
              }
              await refresh();
            }),
          );
      }
    } catch (error) {
      new Setting(listEl).setName("Sources").setDesc(messageOf(error));
    }
  };

  const form: WebSourceForm = { name: "", url: "", include: "", exclude: "", maxPages: "" };
  const field = (name: string, desc: string, key: keyof WebSourceForm, placeholder: string) =>
    new Setting(containerEl)
      .setName(name)
      .setDesc(desc)
      .addText((text) =>
        text.setPlaceholder(placeholder).onChange((value) => {
          form[key] = value;
        }),
      );
  field("Web source name", "Its collection's name: a-z, 0-9, _ and -.", "name", "engine-docs");
  field("Start URL", "Fetched only from this URL's origin and folder, one page at a time.", "url", "https://docs.example.org/manual/");
  field("Include", "Only these URL paths (gitignore-style, comma-separated); empty: all.", "include", "guide/*");
  field("Exclude", "Leave these URL paths out (gitignore-style, comma-separated).", "exclude", "blog/*");
  field("Max pages", "Empty: the sidecar's default (500).", "maxPages", "500");
  const status = new Setting(containerEl).setName("Add web source").setDesc("The sidecar fetches and indexes it at once; it then refreshes it on its schedule.");
  status.addButton((button) =>
    button.setButtonText("Add").onClick(async () => {
      const checked = webSourceBody(form);
      if ("error" in checked) {
        status.setDesc(checked.error);
        return;
      }
      try {
        const added = await sources.add(checked.body);
        status.setDesc(`Added ${added.name}: ${added.next}.`);
      } catch (error) {
        status.setDesc(messageOf(error));
      }
      await refresh();
    }),
  );
  new Setting(containerEl)
    .setName("Indexed sources")
    .setDesc("The vault's sources and what each holds.")
    .addButton((button) => button.setButtonText("Refresh").onClick(() => void refresh()));
  containerEl.appendChild(listEl);
  void refresh();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
