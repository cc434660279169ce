/**
 * The watch phase: `/watch_filters/check` for a block of 200 transactions (100 native transfers, 100 token
 * transfers of 100 different tokens) against 100,000 filters of one key, with the plan PostgreSQL chose;
 * then `watch_getTokenBalances` with DEFAULT_TOKENS (those 100 tokens), counting the HTTP requests that
 * reach the node through a recording proxy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Contract, ContractFactory } from "ethers";
import postgres from "postgres";
import { hashKey } from "../src/db/apiKeys";
import { startAnvil } from "../src/families/evm/devChain";
import { createWatchMatchQueries } from "../src/families/evm/watchMatchQueries";
import { rpc, rpcBatch, waitForReceipt } from "../test/support/chain";
import { startPostgres } from "../test/support/postgres";
import { startProxy } from "../test/support/proxy";
import { compileContracts } from "../test/support/solc";
import { fmt, latencies, startService, waitUntil } from "./support";

const TOKENS = 100;
const NATIVE_TRANSFERS = 100;
const FILTERS = 100_000;
const KEY = "bench-key";
const BALANCE_CALLS = 5;

const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const address = (n: number) => `0x${(0xf0000000 + n).toString(16).padStart(40, "0")}`;

async function buildChain(url: string): Promise<{ block: number; tokens: string[]; participants: string[] }> {
  const call = rpc(url);
  const artifacts = await compileContracts();
  const accounts = await call<string[]>("eth_accounts");
  const iface = new Contract(accounts[0]!, artifacts.TestToken!.abi).interface;
  const deploy = await new ContractFactory(
    artifacts.TestToken!.abi,
    artifacts.TestToken!.bytecode,
  ).getDeployTransaction("Bench Token", "BT", 18);
  // 100 tokens, each minted to one of anvil's accounts (each its own block, automined).
  const tokens: string[] = [];
  for (let i = 0; i < TOKENS; i++) {
    const hash = await call<string>("eth_sendTransaction", [
      { from: accounts[0], data: deploy.data, gas: hex(3_000_000) },
    ]);
    tokens.push(((await waitForReceipt(url, hash)).contractAddress as string).toLowerCase());
  }
  // Explicit nonces: the node takes a batch's transactions in any order.
  const nonces = new Map<string, number>();
  for (const a of accounts)
    nonces.set(a, Number(await call<string>("eth_getTransactionCount", [a, "pending"])));
  const tx = (from: string, fields: Record<string, unknown>) => {
    const nonce = nonces.get(from)!;
    nonces.set(from, nonce + 1);
    return {
      method: "eth_sendTransaction",
      params: [{ from, nonce: hex(nonce), gas: hex(100_000), ...fields }],
    };
  };
  const participants = new Set<string>();
  await call("evm_setAutomine", [false]);
  try {
    // The mints in one block; then one block of 100 token transfers (one per token) and 100 native
    // transfers, from ten senders.
    await rpcBatch(
      url,
      tokens.map((token, i) =>
        tx(accounts[0]!, {
          to: token,
          data: iface.encodeFunctionData("mint", [accounts[i % 10], 10n ** 24n]),
        }),
      ),
    );
    await call("evm_mine", []);
    const calls: { method: string; params: unknown[] }[] = [];
    for (let i = 0; i < TOKENS; i++) {
      const to = address(i);
      participants.add(to).add(accounts[i % 10]!.toLowerCase());
      calls.push(
        tx(accounts[i % 10]!, {
          to: tokens[i],
          data: iface.encodeFunctionData("transfer", [to, BigInt(i + 1)]),
        }),
      );
    }
    for (let i = 0; i < NATIVE_TRANSFERS; i++) {
      const to = address(TOKENS + i);
      participants.add(to);
      calls.push(tx(accounts[i % 10]!, { to, value: hex(i + 1), gas: hex(21_000) }));
    }
    await rpcBatch(url, calls);
    await call("evm_mine", []);
  } finally {
    await call("evm_setAutomine", [true]);
  }
  const block = Number(await call<string>("eth_blockNumber"));
  const count = Number(await call<string>("eth_getBlockTransactionCountByNumber", [hex(block)]));
  if (count !== TOKENS + NATIVE_TRANSFERS) throw new Error(`the block holds ${count} transactions`);
  return { block, tokens, participants: [...participants] };
}

export async function watchPhase(lines: string[], rows: Record<string, unknown>[]) {
  const anvil = await startAnvil();
  const pg = await startPostgres({ durable: true });
  const proxy = startProxy(anvil.url);
  const dataDir = mkdtempSync(join(tmpdir(), "cg-bench-watch-"));
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    const { block, participants } = await buildChain(anvil.url);
    const databaseUrl = await pg.createDatabase("watch");
    service = await startService(proxy.url, dataDir, {
      DATABASE_URL: databaseUrl,
      INDEXER: "on",
      HEAD_POLL_MS: "100",
      API_KEYS: KEY,
    });
    const lastUrl = `${service.url}/watch_filters/lastBlockNumber?api_key=${KEY}`;
    await waitUntil(
      "the index to reach the block",
      async () => ((await (await fetch(lastUrl)).json()) as { block_number: number }).block_number >= block,
    );

    // 100,000 filters of one key: every address of the block, the rest on addresses that never move.
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const others = FILTERS - participants.length;
    await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
      select decode(${hashKey(KEY)}, 'hex'), decode(a, 'hex'), null, false
      from unnest(${participants.map((p) => p.slice(2))}::text[]) a`;
    await sql`insert into watch_filters (key_hash, address, contract_address, with_approval)
      select decode(${hashKey(KEY)}, 'hex'), decode(lpad(to_hex(x), 40, '0'), 'hex'), null, false
      from generate_series(1, ${others}) x`;
    await sql`analyze watch_filters`;
    const plan = await createWatchMatchQueries(sql as never).explainMatches(hashKey(KEY), BigInt(block));
    await sql.end();

    const url = `${service.url}/watch_filters/check?api_key=${KEY}`;
    const body = JSON.stringify({ block_number: block });
    const answer = (await (
      await fetch(url, { method: "POST", body, headers: { "content-type": "application/json" } })
    ).json()) as {
      filters: unknown[];
    };
    const { single, busy, table } = await latencies(url, body);

    // DEFAULT_TOKENS for holders never asked about before (nothing cached): HTTP requests at the node.
    const requests: number[] = [];
    const balanceMs: number[] = [];
    for (let i = 0; i < BALANCE_CALLS; i++) {
      const before = proxy.requests.length;
      const started = performance.now();
      const response = await fetch(`${service.url}/node/jsonrpc?api_key=${KEY}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: i,
          method: "watch_getTokenBalances",
          params: [address(100_000 + i), "DEFAULT_TOKENS"],
        }),
      });
      const result = (await response.json()) as { result: { token_balances: unknown[] } };
      balanceMs.push(performance.now() - started);
      if (result.result.token_balances.length !== TOKENS)
        throw new Error("DEFAULT_TOKENS is not the 100 tokens");
      requests.push(
        proxy.requests.slice(before).filter((r) => JSON.stringify(r).includes('"eth_call"')).length,
      );
    }

    lines.push(
      "",
      `/watch_filters/check for a block of ${TOKENS + NATIVE_TRANSFERS} transactions against ${fmt(FILTERS)} filters of one key (${fmt(answer.filters.length)} results):`,
      "",
      ...table,
      "",
      "The match's plan (EXPLAIN ANALYZE):",
      "",
      "```",
      plan,
      "```",
      "",
      `watch_getTokenBalances with DEFAULT_TOKENS (${TOKENS} contracts), ${BALANCE_CALLS} holders never asked before: HTTP requests carrying eth_call that reached the node per call: ${requests.join(", ")}; latency ${balanceMs.map((l) => `${fmt(l, 1)} ms`).join(", ")}.`,
    );
    rows.push({
      phase: "watch",
      results: answer.filters.length,
      single,
      busy,
      plan,
      balanceRequests: requests,
      balanceMs,
    });
  } finally {
    await service?.stop();
    proxy.stop();
    await pg.stop();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
