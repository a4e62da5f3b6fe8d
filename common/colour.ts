// Whether a program's text output gets ANSI colour: the one answer for the agent's `scan` and the
// collector's `report` and `scan-node`, so both read --color and the environment alike.

/** --color's values, for both programs' flags. */
export const COLOR_WHEN = ["auto", "always", "never"] as const;
export type ColorWhen = (typeof COLOR_WHEN)[number];

/**
 * FORCE_COLOR's values that mean "colour": Node's own reading (lib/internal/tty.js getColorDepth gives
 * 16 colours or more for "", "1", "true", "2" and "3", none for any other value such as "0" or "false").
 */
const FORCE_ON = new Set(["", "1", "true", "2", "3"]);

/**
 * --color always or never decides alone. Under auto, as Node decides for its own console
 * (lib/internal/util/colors.js shouldColorize): FORCE_COLOR, when set, decides and beats NO_COLOR,
 * on a terminal or not; else NO_COLOR set to anything but "" turns colour off (no-color.org); else
 * colour only on a terminal, never into a pipe or a file.
 */
export function useColour(when: ColorWhen, env: NodeJS.ProcessEnv, isTTY: boolean | undefined): boolean {
  if (when !== "auto") return when === "always";
  const force = env.FORCE_COLOR;
  if (force !== undefined) return FORCE_ON.has(force);
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return isTTY === true;
}
