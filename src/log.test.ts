import { expect, test } from "bun:test";
import { createLogger, warnEveryMinute } from "./log";

test("warnEveryMinute: one line of a kind a minute, each kind on its own clock", () => {
  const lines: { msg: string; n?: number }[] = [];
  const log = createLogger({ level: "warn", write: (line) => lines.push(JSON.parse(line)) });
  let now = 0;
  const clock = () => now;
  const failed = warnEveryMinute(log, "a read failed", clock);
  const other = warnEveryMinute(log, "another read failed", clock);
  for (let n = 0; n < 5; n++) failed({ n });
  other({ n: 0 });
  now = 59_999;
  failed({ n: 5 });
  now = 60_000;
  failed({ n: 6 });
  failed({ n: 7 });
  expect(lines.map((l) => [l.msg, l.n])).toEqual([
    ["a read failed", 0],
    ["another read failed", 0],
    ["a read failed", 6],
  ]);
});
