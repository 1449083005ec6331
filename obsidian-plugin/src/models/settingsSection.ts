/**
 * The settings tab's "Models" section: where the answers come from (the sidecar's settings
 * file, or a server and model chosen here), the server's model list, the API key (kept by
 * `secrets.ts`, never in data.json), a test that shows the model's answer and web search. The
 * embedding model has its own section (`embeddingSection.ts`).
 */
import { type DropdownComponent, Setting, type TextComponent } from "obsidian";

import type { ModelsState, ModelTry } from "../client/models";
import { type ChatSource, describeModels, describeTry, type ModelSettings, parseDomains, SERVER_PRESETS } from "./choice";
import { CHAT_KEY_ID, type KeyStore, TAVILY_KEY_ID } from "./secrets";

/** What the section needs from the plugin. */
export interface ModelControls {
  readonly keys: KeyStore;
  /** `GET /v1/models` (after pushing the current choice). */
  state(): Promise<ModelsState>;
  /** `POST /v1/settings/models/test` with the current choice. */
  tryChoice(): Promise<ModelTry>;
  /** Push the choice again (settings or keys changed). */
  push(): Promise<void>;
}

export function displayModelSection(
  containerEl: HTMLElement,
  settings: ModelSettings,
  controls: ModelControls | null,
  save: () => Promise<void>,
): void {
  new Setting(containerEl).setName("Models").setHeading();
  const inUse = new Setting(containerEl).setName("In use").setDesc("Ask the sidecar which models it uses.");
  let listed: string[] = [];
  let fillModels: (ids: string[]) => void = () => undefined;
  const refresh = async () => {
    if (controls === null) return;
    inUse.setDesc("Asking the sidecar…");
    try {
      const state = await controls.state();
      listed = state.chat.models;
      inUse.setDesc(describeModels(state) + (state.chat.error ? ` Model list: ${state.chat.error}.` : ""));
      fillModels(listed);
    } catch (error) {
      inUse.setDesc(`The sidecar could not be asked: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  inUse.addButton((button) => button.setButtonText("Refresh").onClick(() => void refresh()));

  new Setting(containerEl)
    .setName("Answers come from")
    .setDesc("The sidecar's settings file, or the server and model below (used when the model chosen here is picked).")
    .addDropdown((dropdown) =>
      dropdown
        .addOption("sidecar", "The sidecar's settings file")
        .addOption("plugin", "The model chosen here")
        .setValue(settings.chatSource)
        .onChange(async (value) => {
          settings.chatSource = (value === "plugin" ? "plugin" : "sidecar") satisfies ChatSource;
          await save();
        }),
    );

  const server = new Setting(containerEl)
    .setName("Model server")
    .setDesc("Any OpenAI-compatible server: its base URL, usually ending in /v1; the presets fill it in. Empty: OpenAI.");
  let urlText: TextComponent | null = null;
  server.addDropdown((dropdown) => {
    dropdown.addOption("", "Preset…");
    for (const preset of SERVER_PRESETS) dropdown.addOption(preset.url, preset.label);
    dropdown.setValue("").onChange(async (value) => {
      if (value === "") return;
      settings.chatBaseUrl = value;
      urlText?.setValue(value);
      await save();
    });
  });
  server.addText((text) =>
    (urlText = text)
      .setPlaceholder("Empty: OpenAI")
      .setValue(settings.chatBaseUrl)
      .onChange(async (value) => {
        settings.chatBaseUrl = value.trim();
        await save();
      }),
  );

  const keys = controls?.keys ?? null;
  new Setting(containerEl)
    .setName("API key")
    .setDesc(`For servers that need one (local servers do not). Kept in ${keys?.where ?? "memory"}, never in the plugin's data file.`)
    .addText((text) => {
      text.inputEl.type = "password";
      text.setValue(keys?.get(CHAT_KEY_ID) ?? "").onChange(async (value) => {
        keys?.set(CHAT_KEY_ID, value.trim());
        await save();
      });
    });

  const models = new Setting(containerEl).setName("Chat model").setDesc("Pick from what the server lists, or type a model ID.");
  let select: DropdownComponent | null = null;
  let modelText: TextComponent | null = null;
  models.addDropdown((dropdown) => {
    select = dropdown;
    dropdown.onChange(async (value) => {
      if (value === "") return;
      settings.chatModel = value;
      modelText?.setValue(value);
      await save();
    });
  });
  models.addText((text) =>
    (modelText = text)
      .setPlaceholder("Model ID")
      .setValue(settings.chatModel)
      .onChange(async (value) => {
        settings.chatModel = value.trim();
        await save();
      }),
  );
  fillModels = (ids: string[]) => {
    if (select === null) return;
    const dropdown: DropdownComponent = select;
    dropdown.selectEl.empty();
    dropdown.addOption("", ids.length ? `${ids.length} models listed…` : "No models listed");
    for (const id of ids) dropdown.addOption(id, id);
    dropdown.setValue("");
  };
  fillModels(listed);

  const test = new Setting(containerEl).setName("Test the model").setDesc("Sends one short question and shows the answer.");
  test.addButton((button) =>
    button.setButtonText("Test").onClick(async () => {
      if (controls === null) return;
      test.setDesc("Asking the model…");
      try {
        const result = await controls.tryChoice();
        test.setDesc(describeTry(result));
        test.descEl.toggleClass("vault-rag-setting-error", !result.ok);
        if (result.models.length) fillModels(result.models);
      } catch (error) {
        test.setDesc(`The sidecar could not be asked: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );

  new Setting(containerEl).setName("Web search").setHeading();
  new Setting(containerEl)
    .setName("Tavily API key")
    .setDesc(`Lets "Vault + web" answers search the web. Kept in ${keys?.where ?? "memory"}.`)
    .addText((text) => {
      text.inputEl.type = "password";
      text.setValue(keys?.get(TAVILY_KEY_ID) ?? "").onChange(async (value) => {
        keys?.set(TAVILY_KEY_ID, value.trim());
        await save();
      });
    });
  new Setting(containerEl)
    .setName("Allowed web domains")
    .setDesc("Web search only reads these sites; empty: the sidecar's default list. One per line.")
    .addTextArea((area) =>
      area
        .setPlaceholder("dev.epicgames.com")
        .setValue(settings.webDomains.join("\n"))
        .onChange(async (value) => {
          settings.webDomains = parseDomains(value);
          await save();
        }),
    );
  void refresh();
}
