// The thread that parses and validates agent answers (answer-judge.ts), under a heap limit of its own:
// what a hostile answer makes the parse or the validation build ends this thread, not the collector.
import { parentPort } from "node:worker_threads";
import { judgeAnswer } from "./observe.js";
import type { JudgeReply, JudgeRequest } from "./answer-judge.js";

const port = parentPort!;
port.on("message", (m: JudgeRequest) => {
  port.postMessage({ id: m.id, parsed: judgeAnswer(m.route, m.body) } satisfies JudgeReply);
});
