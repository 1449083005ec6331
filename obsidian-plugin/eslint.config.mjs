// `npm run lint`: the rules of Obsidian's plugin review (eslint-plugin-obsidianmd's
// recommended config, which includes eslint's and typescript-eslint's type-checked rules).
import { defineConfig } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";

export default defineConfig([
  // src/client/openapi.ts is generated from the spec (npm run gen:types).
  { ignores: ["main.js", "node_modules/", "test-output/", "tests/", "*.mjs", "*.mts", "src/client/openapi.ts"] },
  ...obsidianmd.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Sentence case everywhere, with the product's name kept as it is spelled and the ask
      // pane's three lower-case status fragments ("asking…", "failed", "stopped": the progress
      // line reads "done · 3 sources", "reading “Note”…") left as they are.
      "obsidianmd/ui/sentence-case": ["warn", { brands: ["Vault RAG", "Obsidian", "OpenAI", "Ollama", "LM Studio", "Tavily"], ignoreRegex: ["^(asking…|failed|stopped)$"] }],
      // display() is what Obsidian before 1.13 (minAppVersion 1.7.2) shows; the declarative
      // getSettingDefinitions() API only exists from 1.13.0.
      "obsidianmd/settings-tab/prefer-setting-definitions": "off",
    },
  },
  {
    files: ["src/view/**/*.ts"],
    rules: {
      // The pane's DOM code (dom.ts h(), turn.ts) also runs in a plain browser page (tests/browser,
      // the Chromium test) where Obsidian's createEl helpers do not exist.
      "obsidianmd/prefer-create-el": "off",
    },
  },
]);
