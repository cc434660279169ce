/** API keys (docs/interface.md §6): query or header, 401 bodies for REST and JSON-RPC, keys from the database. */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createApiKeyStore, hashKey } from "../src/db/apiKeys";
import type { Sql } from "../src/db/database";
import { post, startTestService } from "./support/service";
import { fixtureChain, onTeardown, postgresServer } from "./support/shared";

let service: string;
let databaseUrl: string;
let openService: string;

beforeAll(async () => {
  const { anvil } = await fixtureChain();
  ({ url: service, databaseUrl } = await startTestService({
    upstreamUrls: [anvil.url],
    env: { API_KEYS: "key-one, key-two" },
  }));
  openService = (await startTestService({ upstreamUrls: [anvil.url] })).url;
});

const REST = "/node/rest/eth_blockNumber";
const RPC = { jsonrpc: "2.0", id: 11, method: "eth_blockNumber", params: [] };

describe("with keys configured", () => {
  test("no key: 401 with a REST detail and a JSON-RPC error echoing the id", async () => {
    const rest = await post(`${service}${REST}`, undefined);
    expect(rest.status).toBe(401);
    expect(rest.json).toEqual({
      detail: "missing API key: pass it as the api_key query parameter or the x-api-key header",
    });
    const rpc = await post(`${service}/node/jsonrpc`, RPC);
    expect(rpc.status).toBe(401);
    expect(rpc.json).toEqual({
      jsonrpc: "2.0",
      id: 11,
      error: {
        code: -32001,
        message: "missing API key: pass it as the api_key query parameter or the x-api-key header",
      },
    });
  });

  test("a wrong key: 401", async () => {
    const rest = await post(`${service}${REST}?api_key=nope`, undefined);
    expect(rest.status).toBe(401);
    expect(rest.json).toEqual({ detail: "invalid API key" });
    const rpc = await post(`${service}/node/jsonrpc`, RPC, { headers: { "x-api-key": "nope" } });
    expect(rpc.status).toBe(401);
    expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 11, error: { code: -32001, message: "invalid API key" } });
  });

  test("the key in the query, in x-api-key, in api_key, or the same key twice: 200", async () => {
    expect((await post(`${service}${REST}?api_key=key-one`, undefined)).status).toBe(200);
    expect((await post(`${service}${REST}`, undefined, { headers: { "x-api-key": "key-two" } })).status).toBe(
      200,
    );
    expect((await post(`${service}${REST}`, undefined, { headers: { api_key: "key-one" } })).status).toBe(
      200,
    );
    const both = await post(`${service}/node/jsonrpc?api_key=key-one`, RPC, {
      headers: { "x-api-key": "key-one" },
    });
    expect(both.status).toBe(200);
    expect(both.json.id).toBe(11);
  });

  test("two different keys: 401", async () => {
    const response = await post(`${service}${REST}?api_key=key-one`, undefined, {
      headers: { "x-api-key": "key-two" },
    });
    expect(response.status).toBe(401);
    expect(response.json).toEqual({ detail: "the request carries two different API keys; send one" });
  });

  test("watch filters need a key too; health and the docs do not", async () => {
    expect((await post(`${service}/watch_filters/all`, undefined)).status).toBe(401);
    expect((await fetch(`${service}/health`)).status).toBe(200);
    expect((await fetch(`${service}/health/`)).status).toBe(200);
    expect((await fetch(`${service}/swagger`)).status).toBe(200);
    expect((await fetch(`${service}/swagger/json`)).status).toBe(200);
  });

  test("a key added to the database is accepted; only its hash is stored", async () => {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} }) as unknown as Sql;
    onTeardown(() => sql.end());
    expect((await post(`${service}${REST}?api_key=db-key-1`, undefined)).status).toBe(401);
    await Bun.sleep(2_100); // past the unknown-key reload interval
    await createApiKeyStore(sql).add(hashKey("db-key-1"), "test");
    const response = await post(`${service}${REST}?api_key=db-key-1`, undefined);
    expect(response.status).toBe(200);
    const rows = await sql`select encode(key_hash, 'hex') as h from api_keys`;
    expect(rows.map((r) => r.h)).toEqual([hashKey("db-key-1")]);
  });
});

test("with no key configured the service is open", async () => {
  const rest = await post(`${openService}${REST}`, undefined);
  expect(rest.status).toBe(200);
  expect((await post(`${openService}${REST}?api_key=anything`, undefined)).status).toBe(200);
});

describe("auth never opens by itself", () => {
  test("revoking the last database key leaves the service closed: 401 for everyone", async () => {
    const { anvil } = await fixtureChain();
    const database = await (await postgresServer()).createDatabase();
    const sql = postgres(database, { max: 1, onnotice: () => {} }) as unknown as Sql;
    onTeardown(() => sql.end());
    // The schema first (a service made it), then one key in the table.
    await (await startTestService({ upstreamUrls: [anvil.url], databaseUrl: database })).stop();
    const store = createApiKeyStore(sql);
    await store.add(hashKey("only-key"), "the only one");
    const { url } = await startTestService({ upstreamUrls: [anvil.url], databaseUrl: database });
    expect((await post(`${url}${REST}`, undefined)).status).toBe(401);
    expect((await post(`${url}${REST}?api_key=only-key`, undefined)).status).toBe(200);
    expect(await store.revoke(hashKey("only-key").slice(0, 12))).toBe(1);
    await Bun.sleep(2_100); // past the unknown-key reload interval: the next unknown key reloads them
    expect((await post(`${url}${REST}?api_key=another-key`, undefined)).status).toBe(401);
    expect((await post(`${url}${REST}?api_key=only-key`, undefined)).status).toBe(401);
    const none = await post(`${url}${REST}`, undefined);
    expect(none.status).toBe(401);
    expect(none.json.detail).toStartWith("missing API key");
  });

  test("a key table that cannot be read stops the start with a message", async () => {
    const { anvil } = await fixtureChain();
    const pg = await postgresServer();
    const database = await pg.createDatabase();
    await (await startTestService({ upstreamUrls: [anvil.url], databaseUrl: database })).stop();
    // A role that can read every table but the keys.
    const admin = postgres(database, { max: 1, onnotice: () => {} });
    onTeardown(() => admin.end());
    const role = `reader_${Date.now()}`;
    await admin.unsafe(`create role ${role} login`);
    await admin.unsafe(`grant all on schema public to ${role}`);
    await admin.unsafe(`grant all on all tables in schema public to ${role}`);
    await admin.unsafe(`grant all on all sequences in schema public to ${role}`);
    await admin.unsafe(`revoke all on api_keys from ${role}`);
    const asReader = database.replace(/\/\/[^@/]+@/, `//${role}@`);
    expect(asReader).not.toBe(database);
    let failure: Error | undefined;
    try {
      await startTestService({ upstreamUrls: [anvil.url], databaseUrl: asReader });
    } catch (error) {
      failure = error as Error;
    }
    expect(failure?.message).toStartWith(
      "the API key table cannot be read, so whether the service may run open is unknown:",
    );
    expect(failure?.message).toContain("permission denied");
  });
});
