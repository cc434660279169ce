/**
 * What the webhooks' producer reads (WatchMatcher.resultsOfKeys: every key's results of a block in one read)
 * held to what check reads (`results`, one key at a time): the same keys, each with the same list.
 */
import { expect } from "bun:test";
import type { ProcessedBlock, WatchMatcher, WatchVersion } from "../../src/watch/watchMatcher";

type Results = Awaited<ReturnType<WatchMatcher["resultsOfKeys"]>>;

/** Asserts resultsOfKeys equals results key by key (a key with none absent); returns both reads. */
export async function expectResultsOfKeysAsEach(
  matcher: WatchMatcher,
  keys: readonly (string | null)[],
  block: ProcessedBlock,
  version: WatchVersion,
): Promise<{ all: Results; each: Results }> {
  const all = await matcher.resultsOfKeys(keys, block, version);
  const each: Results = new Map();
  for (const key of keys) {
    const results = await matcher.results(key, block, version);
    if (results.length > 0) each.set(key, results);
  }
  const n = block.number;
  // The same keys (in any order: the map's is its results'), each with the same list.
  const sorted = (m: Results) => [...m.keys()].map(String).sort();
  expect({ n, version, keys: sorted(all) }).toEqual({ n, version, keys: sorted(each) });
  expect({ n, version, all: Object.fromEntries(all) }).toEqual({ n, version, all: Object.fromEntries(each) });
  return { all, each };
}
