/** Block time and daily statistics from the index (DESIGN.md §3). */
import { Type as T } from "@sinclair/typebox";
import { NotAvailableError } from "../errors";
import { defineOperation, type Operation } from "./operation";
import { BlockRange, Bodies, DayStats } from "./schemas";

const Timestamp = T.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "a Unix time in seconds",
});
const Day = T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "a UTC date, YYYY-MM-DD" });

export function createStatsOperations(): Operation[] {
  const notYet = (method: string) => async () => {
    throw new NotAvailableError(method);
  };
  return [
    defineOperation({
      method: "watch_getBlockNumberByTimestamp",
      group: "Methods",
      summary: "The number of the last block whose timestamp is at or before the given Unix time.",
      params: [{ name: "timestamp", schema: Timestamp }],
      result: T.Integer(),
      rest: {
        name: "watch_getBlockNumberByTimestamp",
        body: Bodies.timestamp,
        toParams: (b) => [b.timestamp],
        response: T.Integer(),
      },
      run: notYet("watch_getBlockNumberByTimestamp"),
    }),
    defineOperation({
      method: "watch_getStatsByDay",
      group: "Methods",
      summary: "Figures of the UTC day that contains the given Unix time.",
      params: [{ name: "timestamp", schema: Timestamp }],
      result: T.Union([DayStats, T.Null()]),
      rest: {
        name: "watch_getStatsByDay",
        body: Bodies.timestamp,
        toParams: (b) => [b.timestamp],
        response: T.Union([DayStats, T.Null()]),
      },
      run: notYet("watch_getStatsByDay"),
    }),
    defineOperation({
      method: "watch_getBlockNumbersByDay",
      group: "Methods",
      summary: "The first and last block of a UTC day.",
      params: [{ name: "date", schema: Day }],
      result: T.Union([BlockRange, T.Null()]),
      rest: {
        name: "watch_getBlockNumbersByDay",
        body: Bodies.date,
        toParams: (b) => [b.date],
        response: T.Union([BlockRange, T.Null()]),
      },
      run: notYet("watch_getBlockNumbersByDay"),
    }),
  ];
}
