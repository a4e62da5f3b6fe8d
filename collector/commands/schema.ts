import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import { fleetReportJsonSchema } from "../report/schema.js";

/** `proxyscope schema`: the FleetReport JSON Schema, for consumers of `report --output json`. */
export async function run(): Promise<ExitCode> {
  process.stdout.write(`${JSON.stringify(fleetReportJsonSchema(), null, 2)}\n`);
  return EXIT.ok;
}
