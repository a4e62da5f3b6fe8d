import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", ".tap/**", "test/fixtures/**", "bench/results/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // No shell anywhere: every external program goes through agent/io/run.ts with fixed argv.
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "child_process", message: "Use agent/io/run.ts (fixed argv, timeout, output cap)." },
            { name: "node:child_process", message: "Use agent/io/run.ts (fixed argv, timeout, output cap)." },
          ],
        },
      ],
    },
  },
  {
    files: ["agent/io/**", "test/**", "bench/**"],
    rules: { "no-restricted-imports": "off" },
  },
);
