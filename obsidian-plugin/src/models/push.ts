/**
 * Keeps the sidecar on the chat model chosen in Obsidian: the choice is pushed after every
 * (re)connection and whenever the settings or keys change (the sidecar holds it in memory only,
 * so a restarted sidecar needs it again), and not pushed twice in a row unchanged.
 */
import type { SidecarClient } from "../client";
import type { ModelsState, ModelTry } from "../client/models";
import { choiceKey, type ModelSettings, modelsUpdateOf } from "./choice";
import { CHAT_KEY_ID, type KeyStore, TAVILY_KEY_ID } from "./secrets";
import type { ModelControls } from "./settingsSection";

type ModelClient = Pick<SidecarClient, "setModels" | "models" | "tryModels">;

export class ModelPusher implements ModelControls {
  /** What the sidecar last accepted ("" with the sidecar's own settings). */
  private pushed: string | null = null;

  constructor(
    private readonly client: ModelClient,
    private readonly settings: () => ModelSettings,
    readonly keys: KeyStore,
    private readonly report: (error: unknown) => void = () => undefined,
  ) {}

  private update() {
    return modelsUpdateOf(this.settings(), { chatKey: this.keys.get(CHAT_KEY_ID), tavilyKey: this.keys.get(TAVILY_KEY_ID) });
  }

  /** Push the choice unless the sidecar already has it; a failure is retried on the next call. */
  async push(): Promise<void> {
    const update = this.update();
    const key = choiceKey(update);
    if (key === this.pushed) return;
    if (update === null) {
      // Back to the settings file: clear what was pushed this session (null fields keep it).
      if (this.pushed === null) return;
      await this.send({ base_url: null, model: null, api_key: null, tavily_api_key: null, web_include_domains: null }, key);
      return;
    }
    await this.send(update, key);
  }

  /** The sidecar restarted or came back: push again. */
  reconnected(): Promise<void> {
    this.pushed = null;
    return this.push();
  }

  private async send(body: Parameters<ModelClient["setModels"]>[0], key: string): Promise<void> {
    try {
      await this.client.setModels(body);
      this.pushed = key;
    } catch (error) {
      this.pushed = null;
      this.report(error);
    }
  }

  async state(): Promise<ModelsState> {
    await this.push();
    return this.client.models(true);
  }

  tryChoice(): Promise<ModelTry> {
    return this.client.tryModels(this.update() ?? {});
  }
}
