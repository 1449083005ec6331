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
      // display() is what Obsidian before 1.13 (minAppVersion 1.7.2) shows; the declarative
      // getSettingDefinitions() API only exists from 1.13.0.
      "obsidianmd/settings-tab/prefer-setting-definitions": "off",
    },
  },
  {
    files: ["src/view/**/*.ts"],
    rules: {
      // The progress line is a lower-case status fragment ("asking…", "done · 3 sources"), not a label.
      "obsidianmd/ui/sentence-case": "off",
      // The pane's DOM code (dom.ts h(), turn.ts) also runs in a plain browser page (tests/browser,
      // the Chromium test) where Obsidian's createEl helpers do not exist.
      "obsidianmd/prefer-create-el": "off",
    },
  },
]);
