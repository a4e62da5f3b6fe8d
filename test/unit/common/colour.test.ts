import t from "tap";
import { useColour } from "../../../common/colour.js";

// One decision for both programs' text output. Each row below flips one input from its neighbour, so a
// change to any branch (the flag, FORCE_COLOR's values, its precedence over NO_COLOR, the terminal) fails.
t.test("--color always and never decide alone", async (t) => {
  const env = { FORCE_COLOR: "1", NO_COLOR: "1" };
  t.equal(useColour("always", {}, false), true, "always: into a pipe too");
  t.equal(useColour("always", { NO_COLOR: "1" }, false), true, "always beats NO_COLOR");
  t.equal(useColour("never", env, true), false, "never beats FORCE_COLOR and a terminal");
});

t.test("auto: a terminal, unless NO_COLOR says otherwise", async (t) => {
  t.equal(useColour("auto", {}, true), true, "a terminal");
  t.equal(useColour("auto", {}, false), false, "a pipe or a file");
  t.equal(useColour("auto", {}, undefined), false, "a stream that is not a TTY says nothing");
  t.equal(useColour("auto", { NO_COLOR: "1" }, true), false, "NO_COLOR on a terminal");
  t.equal(useColour("auto", { NO_COLOR: "false" }, true), false, "NO_COLOR: any value but the empty one");
  t.equal(useColour("auto", { NO_COLOR: "" }, true), true, "NO_COLOR empty is not set (no-color.org)");
});

t.test("auto: FORCE_COLOR, read as Node reads it, decides before NO_COLOR and the terminal", async (t) => {
  for (const v of ["", "1", "true", "2", "3"]) {
    t.equal(
      useColour("auto", { FORCE_COLOR: v }, false),
      true,
      `FORCE_COLOR=${JSON.stringify(v)} into a pipe`,
    );
    t.equal(useColour("auto", { FORCE_COLOR: v, NO_COLOR: "1" }, false), true, `...and beats NO_COLOR`);
  }
  for (const v of ["0", "false", "yes", "4"]) {
    t.equal(
      useColour("auto", { FORCE_COLOR: v }, true),
      false,
      `FORCE_COLOR=${v} turns it off on a terminal`,
    );
  }
});
