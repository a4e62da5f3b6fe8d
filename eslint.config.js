import js from "@eslint/js";
import tseslint from "typescript-eslint";

const NO_CHILD_PROCESS = [
  { name: "child_process", message: "Use agent/io/run.ts (fixed argv, timeout, output cap)." },
  { name: "node:child_process", message: "Use agent/io/run.ts (fixed argv, timeout, output cap)." },
];

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
          paths: NO_CHILD_PROCESS,
        },
      ],
    },
  },
  {
    files: ["agent/io/**", "test/**", "bench/**"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    // The collector reads the agent only through what the agent publishes (agent/contract.ts); what
    // both programs use lives in common/. common/ imports neither program.
    files: ["collector/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: NO_CHILD_PROCESS,
          patterns: [
            {
              group: ["**/agent/**", "!**/agent/contract.js"],
              message: "The collector imports the agent only through agent/contract.ts (or common/).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["common/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: NO_CHILD_PROCESS,
          patterns: [
            { group: ["**/agent/**", "**/collector/**"], message: "common/ imports neither program." },
          ],
        },
      ],
    },
  },
);
