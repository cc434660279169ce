import { expect, test } from "bun:test";
import { UpstreamUnavailableError } from "../errors";
import { createBatcher } from "./batcher";

test("stop clears the batch timer and fails the calls still queued; later calls fail at once", async () => {
  const posted: string[] = [];
  const batcher = createBatcher({
    windowMs: 60_000,
    maxSize: 100,
    maxInFlight: 1,
    errorKind: () => "request",
    post: async (body) => {
      posted.push(body);
      return "[]";
    },
  });
  const queued = batcher.call("eth_chainId", []);
  batcher.stop();
  const error = await queued.catch((e) => e);
  expect(error).toBeInstanceOf(UpstreamUnavailableError);
  expect((error as UpstreamUnavailableError).reason).toBe("stopped");
  expect(((await batcher.call("eth_chainId", []).catch((e) => e)) as UpstreamUnavailableError).reason).toBe(
    "stopped",
  );
  // Nothing was sent, and no timer is left to send it: the test process would wait a minute otherwise.
  expect(posted).toEqual([]);
});
