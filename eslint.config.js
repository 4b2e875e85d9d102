// ESLint for static/ (the browser's ES modules) and its tests: rules that catch bugs,
// not style. `make check` runs it; versions are pinned in package.json.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
      "no-shadow": ["error", { builtinGlobals: false }],
      "no-shadow-restricted-names": "error",
      "no-redeclare": ["error", { builtinGlobals: true }],
      "prefer-const": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-var": "error",
      "no-implicit-globals": "error",
      "no-use-before-define": ["error", { functions: false, classes: true, variables: false }],
      "no-self-compare": "error",
      "no-template-curly-in-string": "error",
      "no-unmodified-loop-condition": "error",
      "no-unreachable-loop": "error",
      "no-constructor-return": "error",
      "no-promise-executor-return": "error",
      "array-callback-return": "error",
      "no-restricted-globals": ["error", "event", "name", "length", "status", "close", "open", "parent", "top", "self"],
    },
  },
  {
    files: ["static/test/**/*.js"],
    languageOptions: { globals: { ...globals.node } },
  },
];
