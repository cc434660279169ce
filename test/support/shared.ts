/**
 * Real parts shared by every test file of one `bun test` run (one process): one anvil with the fixture
 * chain, one PostgreSQL server. Started on first use, stopped by the preload's afterAll.
 */
import { type DevChain, startAnvil } from "../../src/families/evm/devChain";
import { type ChainFixture, populateChain } from "./chain";
import { type PgServer, startPostgres } from "./postgres";

const teardowns: (() => Promise<void>)[] = [];

export function onTeardown(fn: () => Promise<void>): void {
  teardowns.push(fn);
}

export async function teardownAll(): Promise<void> {
  for (const fn of teardowns.splice(0).reverse()) {
    try {
      await fn();
    } catch (error) {
      console.error("teardown failed", error);
    }
  }
}

/** A fresh anvil, stopped at the end of the run. */
export async function newAnvil(args: string[] = []): Promise<DevChain> {
  const chain = await startAnvil({ args });
  onTeardown(() => chain.stop());
  return chain;
}

let fixture: Promise<{ anvil: DevChain; chain: ChainFixture }> | undefined;

/** The shared anvil holding the fixture chain. Tests must not change its state. */
export function fixtureChain(): Promise<{ anvil: DevChain; chain: ChainFixture }> {
  fixture ??= (async () => {
    const anvil = await newAnvil();
    return { anvil, chain: await populateChain(anvil.url) };
  })();
  return fixture;
}

let pg: Promise<PgServer> | undefined;

export function postgresServer(): Promise<PgServer> {
  pg ??= startPostgres().then((server) => {
    onTeardown(() => server.stop());
    return server;
  });
  return pg;
}
