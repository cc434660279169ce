import { expect, test } from "bun:test";
import type { Caller } from "../caller";
import type { ChainChange } from "../engine/chainFollower";
import { InvalidParamsError } from "../errors";
import { createLogger } from "../log";
import type { Subscription } from "./subscriptionKind";
import {
  createWatchFiltersSubscription,
  type PendingMatch,
  type WatchOptions,
  type WatchResults,
} from "./watchFiltersSubscription";

const blocksOnly: WatchResults = {
  lastBlockNumber: async () => 5n,
  results: async () => ({ hash: "", results: [] }),
  chain: "ETH",
};

test("options: version and pending; pending refused naming the chain where the family matches no mempool", () => {
  const kind = createWatchFiltersSubscription({ watch: blocksOnly });
  const parse = (value: unknown) => kind.parse!(value, undefined as never);
  expect(parse(undefined)).toEqual({ version: "v1", pending: false });
  expect(parse({ version: "v2" })).toEqual({ version: "v2", pending: false });
  expect(parse({ version: "v1", pending: false })).toEqual({ version: "v1", pending: false });
  const refused = () => parse({ pending: true });
  expect(refused).toThrow(InvalidParamsError);
  expect(refused).toThrow(
    'invalid params: "pending" is not served on ETH: its watch filters match blocks only, not the nodes\' mempool',
  );
  for (const bad of [{ version: "v3" }, { pending: "yes" }, [1], "v1"]) {
    expect(() => parse(bad)).toThrow(
      'invalid params: watch_filters takes {"version": "v1" | "v2", "pending": true | false}',
    );
  }
  const withMempool = createWatchFiltersSubscription({
    watch: { ...blocksOnly, pending: () => ({ watch: async () => {}, changed() {}, stop() {} }) },
  });
  expect(withMempool.parse!({ pending: true }, undefined as never)).toEqual({ version: "v1", pending: true });
});

/**
 * The kind's side of the mempool follower (the family's, families/utxo/mempoolFeed.ts, runs against a real
 * node in test/utxo-watch.test.ts): one follower while a pending subscription is held, told the keys of the
 * pending subscriptions, its results sent to those of their key only (both versions), stopped with the last.
 */
test("one mempool follower for the pending subscriptions, their keys, their results; stopped with the last", async () => {
  const calls: string[] = [];
  let notify: ((matches: PendingMatch[]) => void) | undefined;
  let started = 0;
  const watch: WatchResults = {
    ...blocksOnly,
    pending(deliver) {
      started++;
      notify = deliver;
      return {
        watch: async (keys) => {
          calls.push(`watch ${[...keys].map((k) => k ?? "open").join(",")}`);
        },
        changed: (change: ChainChange) => calls.push(`changed ${change.added.length}`),
        stop: () => calls.push("stop"),
      };
    },
  };
  const sent: [string, string][] = [];
  const kind = createWatchFiltersSubscription({ watch });
  const members = new Set<Subscription<WatchOptions>>();
  const feed = kind.open({
    subscriptions: members,
    notify: (s, text) => sent.push([s.id, text]),
    head: undefined as never,
    engine: undefined as never,
    upstreamSubscribe: () => undefined,
    log: createLogger({ level: "error" }),
  });
  const subscribe = (id: string, keyHash: string | null, options: WatchOptions) => {
    const s: Subscription<WatchOptions> = {
      id,
      subscriber: { caller: { keyHash } as Caller, send() {} },
      options,
    };
    members.add(s);
    return s;
  };
  const plain = subscribe("plain", "aa", { version: "v1", pending: false });
  await feed.join!(plain);
  expect(started).toBe(0);
  const a1 = subscribe("a1", "aa", { version: "v1", pending: true });
  const a2 = subscribe("a2", "aa", { version: "v2", pending: true });
  const b = subscribe("b", "bb", { version: "v1", pending: true });
  await feed.join!(a1);
  await feed.join!(a2);
  await feed.join!(b);
  expect(started).toBe(1);
  expect(calls).toEqual(["watch aa", "watch aa", "watch aa,bb"]);
  notify!([
    { keyHash: "aa", result: { n: 1 } },
    { keyHash: "bb", result: { n: 2 } },
    { keyHash: "cc", result: { n: 3 } },
  ]);
  expect(sent).toEqual([
    ["a1", '{"n":1}'],
    ["a2", '{"n":1}'],
    ["b", '{"n":2}'],
  ]);
  feed.changed!({ removed: [], added: [] });
  feed.leave!(b);
  feed.leave!(a1);
  feed.leave!(plain);
  expect(calls.slice(3)).toEqual(["changed 0", "watch aa", "watch aa"]);
  feed.leave!(a2);
  expect(calls.slice(6)).toEqual(["stop"]);
  // A new pending subscription starts another.
  await feed.join!(subscribe("c", null, { version: "v1", pending: true }));
  expect(started).toBe(2);
  expect(calls.slice(7)).toEqual(["watch open"]);
  feed.stop!();
  expect(calls.slice(8)).toEqual(["stop"]);
});
