/**
 * The chain index against a real anvil and a real PostgreSQL: a chain of known movements at known times is
 * indexed, and the transfer, block-time and daily-figure operations must answer exactly what was moved.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { rpc } from "./support/chain";
import {
  BIG,
  DAY,
  type ExpectedTransfer,
  GENESIS_TIME,
  LEAP_DAY,
  MOVEMENTS_ANVIL_ARGS,
  type Movements,
  makeMovements,
  transferJson,
} from "./support/movements";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { until } from "./support/until";

let movements: Movements;
let service: TestService;
let blocks: { number: number; timestamp: number; raw: any; receipts: any[] }[];
const INDEX_ENV = { INDEXER: "on", HEAD_POLL_MS: "50", INDEX_PARTITION_BLOCKS: "10" };

const rest = (name: string, body: unknown) => post(`${service.url}/node/rest/${name}`, body);
const jsonrpc = (method: string, params: unknown[]) =>
  post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });
const page = (list: ExpectedTransfer[]) => `[${list.map(transferJson).join(",")}]`;
const all = () => rest("watch_getTransfers", { limit: 500 });

beforeAll(async () => {
  const anvil = await newAnvil(MOVEMENTS_ANVIL_ARGS);
  movements = await makeMovements(anvil.url);
  const call = rpc(anvil.url);
  blocks = [];
  for (let n = 0; n <= movements.head; n++) {
    const raw = await call("eth_getBlockByNumber", [`0x${n.toString(16)}`, true]);
    const receipts = await call<any[]>("eth_getBlockReceipts", [`0x${n.toString(16)}`]);
    blocks.push({ number: n, timestamp: Number(raw.timestamp), raw, receipts });
  }
  // Partitions of 10 blocks: every test of this file reads an index spread over several of them.
  service = await startTestService({ upstreamUrls: [anvil.url], env: INDEX_ENV });
  // Caught up once every row is there with its token's metadata (read just after the block is written).
  const expected = page(movements.transfers);
  await until(
    "the index to catch up",
    async () => ((await all()).text === expected ? true : undefined),
    30_000,
  );
}, 120_000);

describe("transfers", () => {
  test("every movement, in order, with its exact fields, over REST and JSON-RPC", async () => {
    const answer = await all();
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(page(movements.transfers));
    // The amounts are exact digits, never a float's approximation.
    expect(answer.text).toContain(`"value":${BIG.nearMax}`);
    expect(answer.text).toContain(`"value":${BIG.aboveU64}`);
    expect(answer.text).toContain(`"value":${BIG.exact}`);
    expect(answer.text).toContain(`"value":${BIG.nftId}`);
    const call = await jsonrpc("watch_getTransfers", [{ limit: 500 }]);
    expect(call.text).toBe(`{"jsonrpc":"2.0","id":1,"result":${page(movements.transfers)}}`);
    // The kinds the chain holds, each at least once.
    const kinds = new Set(movements.transfers.map((t) => `${t.transferType}:${t.transactionError}`));
    expect([...kinds].sort()).toEqual([
      "erc20transfer:false",
      "erc721transfer:false",
      "trx:false",
      "trx:true",
    ]);
  });

  test("paging with offset and limit covers every row once", async () => {
    const seen: unknown[] = [];
    for (let offset = 0; offset < 100; offset += 4) {
      const answer = await rest("watch_getTransfers", { offset, limit: 4 });
      seen.push(...answer.json);
      if (answer.json.length < 4) break;
    }
    expect(JSON.stringify(seen)).toBe(JSON.stringify(JSON.parse(page(movements.transfers))));
    expect((await rest("watch_getTransfers", { limit: 0 })).json).toEqual([]);
    expect((await rest("watch_getTransfers", {})).json).toHaveLength(
      Math.min(50, movements.transfers.length),
    );
    const offsetPast = await rest("watch_getTransfers", { offset: movements.transfers.length });
    expect(offsetPast.json).toEqual([]);
  });

  test("keyset paging: each page `after` the last row of the one before equals the offset page", async () => {
    const after = (t: ExpectedTransfer) => ({
      blockNumber: t.blockNumber,
      transactionIndex: t.transactionIndex,
      logIndex: t.logIndex,
    });
    const { alice, dave, erin } = movements.accounts;
    const three = movements.transfers.filter((t) =>
      [alice, dave, erin].some((a) => t.from === a || t.to === a),
    );
    const tokens = movements.transfers.filter((t) => t.transferType === "erc20transfer");
    for (const [name, query, rows] of [
      ["watch_getTransfers", {}, movements.transfers],
      ["watch_getTransfersByAddress", { addresses: [alice, dave, erin] }, three],
      ["watch_getTransfers", { transferType: "erc20transfer" }, tokens],
    ] as const) {
      for (let at = 0; at <= rows.length; at += 3) {
        const body = { ...query, limit: 3, ...(at === 0 ? {} : { after: after(rows[at - 1]!) }) };
        const answer = await rest(name, body);
        expect({ body, text: answer.text }).toEqual({ body, text: page(rows.slice(at, at + 3)) });
      }
    }
    // Native rows have no log index: a cursor after one names it null (it sorts before its transaction's logs).
    const native = movements.transfers.findIndex(
      (t, i) => t.logIndex === null && i + 1 < movements.transfers.length,
    );
    expect(native).toBeGreaterThanOrEqual(0);
    const call = await jsonrpc("watch_getTransfers", [
      { after: after(movements.transfers[native]!), limit: 2 },
    ]);
    expect(call.text).toBe(
      `{"jsonrpc":"2.0","id":1,"result":${page(movements.transfers.slice(native + 1, native + 3))}}`,
    );
    // Offsets stop at 10,000: deeper pages go `after` a row.
    const deep = await rest("watch_getTransfers", { offset: 10_001 });
    expect({ status: deep.status, body: deep.json }).toEqual({
      status: 422,
      body: {
        detail: [
          {
            loc: ["body", "offset"],
            msg: 'Input should be less than or equal to 10000: page deeper with "after" (the last row\'s blockNumber, transactionIndex and logIndex)',
            type: "less_than_equal",
          },
        ],
      },
    });
  });

  test("by address: either side, one side, several addresses, any case", async () => {
    const { alice, bob, erin, dave } = movements.accounts;
    const of = (address: string) => movements.transfers.filter((t) => t.from === address || t.to === address);
    for (const address of Object.values(movements.accounts)) {
      const answer = await rest("watch_getTransfersByAddress", { addresses: address, limit: 500 });
      expect(answer.text).toBe(page(of(address)));
    }
    const upper = `0x${bob.slice(2).toUpperCase()}`;
    expect((await rest("watch_getTransfersByAddress", { addresses: [upper], limit: 500 })).text).toBe(
      page(of(bob)),
    );
    expect(
      (await rest("watch_getTransfersByAddress", { addresses: bob, transferDirection: "from", limit: 500 }))
        .text,
    ).toBe(page(movements.transfers.filter((t) => t.from === bob)));
    expect(
      (await rest("watch_getTransfersByAddress", { addresses: bob, transferDirection: "to", limit: 500 }))
        .text,
    ).toBe(page(movements.transfers.filter((t) => t.to === bob)));
    // A transfer between two of the addresses is listed once (bob to erin, pulled by the forwarder).
    const both = movements.transfers.filter(
      (t) => [bob, erin].includes(t.from) || [bob, erin].includes(t.to!),
    );
    expect(both.some((t) => t.from === bob && t.to === erin)).toBe(true);
    expect((await rest("watch_getTransfersByAddress", { addresses: [bob, erin], limit: 500 })).text).toBe(
      page(both),
    );
    // A self-transfer is listed once, on both sides.
    const self = movements.transfers.filter((t) => t.from === erin && t.to === erin);
    expect(self).toHaveLength(1);
    for (const direction of ["from", "to"]) {
      const answer = await rest("watch_getTransfersByAddress", {
        addresses: erin,
        transferDirection: direction,
        transferType: "trx",
        limit: 500,
      });
      expect(answer.text).toBe(
        page(
          movements.transfers.filter(
            (t) => t.transferType === "trx" && t[direction as "from" | "to"] === erin,
          ),
        ),
      );
    }
    // Paging an address's history, several addresses at once.
    const three = movements.transfers.filter((t) =>
      [alice, dave, erin].some((a) => t.from === a || t.to === a),
    );
    const pages: unknown[] = [];
    for (let offset = 0; offset < 60; offset += 3) {
      const answer = await rest("watch_getTransfersByAddress", {
        addresses: [alice, dave, erin],
        offset,
        limit: 3,
      });
      pages.push(...answer.json);
    }
    expect(JSON.stringify(pages)).toBe(JSON.stringify(JSON.parse(page(three))));
    const call = await jsonrpc("watch_getTransfersByAddress", [{ addresses: alice, limit: 500 }]);
    expect(call.json.result).toEqual(JSON.parse(page(of(alice))));
  });

  test("type and contract filters", async () => {
    const { token, oldToken, nft } = movements.contracts;
    for (const type of ["trx", "erc20transfer", "erc721transfer"]) {
      const answer = await rest("watch_getTransfers", { transferType: type, limit: 500 });
      expect(answer.text).toBe(page(movements.transfers.filter((t) => t.transferType === type)));
    }
    expect((await rest("watch_getTransfers", { contractAddresses: token, limit: 500 })).text).toBe(
      page(movements.transfers.filter((t) => t.contractAddress === token)),
    );
    const tokens = movements.transfers.filter(
      (t) => t.contractAddress === token || t.contractAddress === oldToken,
    );
    expect(
      (await rest("watch_getTransfers", { contractAddresses: [oldToken, token], limit: 500 })).text,
    ).toBe(page(tokens));
    // A contract filter leaves native transfers out, whatever the type says.
    expect(
      (await rest("watch_getTransfers", { contractAddresses: [nft], transferType: "trx" })).json,
    ).toEqual([]);
    const { alice } = movements.accounts;
    expect(
      (
        await rest("watch_getTransfersByAddress", {
          addresses: alice,
          contractAddresses: [nft],
          transferType: "erc721transfer",
        })
      ).text,
    ).toBe(
      page(
        movements.transfers.filter((t) => t.contractAddress === nft && (t.from === alice || t.to === alice)),
      ),
    );
  });

  test("block ranges: numbers in every form, tags against the index, empty when reversed", async () => {
    const inRange = (from: number, to: number) =>
      page(movements.transfers.filter((t) => t.blockNumber >= from && t.blockNumber <= to));
    const mid = movements.transfers[4]!.blockNumber;
    for (const [fromBlock, toBlock] of [
      [mid, mid + 3],
      [`0x${mid.toString(16)}`, String(mid + 3)],
    ]) {
      expect((await rest("watch_getTransfers", { fromBlock, toBlock, limit: 500 })).text).toBe(
        inRange(mid, mid + 3),
      );
    }
    expect(
      (await rest("watch_getTransfers", { fromBlock: "earliest", toBlock: "LATEST", limit: 500 })).text,
    ).toBe(inRange(0, movements.head));
    expect((await rest("watch_getTransfers", { fromBlock: "latest", limit: 500 })).text).toBe(
      inRange(movements.head, movements.head),
    );
    // anvil calls final what is 64 blocks deep; the service takes the node's word.
    const finalized = ((await (await fetch(`${service.url}/health`)).json()) as any).head.finalized;
    expect(finalized).toBe(Math.max(0, movements.head - 64));
    expect((await rest("watch_getTransfers", { toBlock: "finalized", limit: 500 })).text).toBe(
      inRange(0, finalized),
    );
    expect((await rest("watch_getTransfers", { fromBlock: 0, toBlock: "safe", limit: 500 })).text).toBe(
      inRange(0, finalized),
    );
    expect((await rest("watch_getTransfers", { fromBlock: mid + 1, toBlock: mid })).json).toEqual([]);
    expect((await rest("watch_getTransfers", { fromBlock: movements.head + 1 })).json).toEqual([]);
    expect((await rest("watch_getTransfers", { toBlock: "0xffffffffffffffff", limit: 500 })).text).toBe(
      inRange(0, movements.head),
    );
  });

  test("bad filters are refused with the field named", async () => {
    const answer = await rest("watch_getTransfersByAddress", { addresses: "0x12", limit: 5 });
    expect(answer.status).toBe(422);
    expect(answer.json.detail[0].loc).toEqual(["body", "addresses"]);
    const extra = await rest("watch_getTransfers", { transferDirection: "to" });
    expect(extra.status).toBe(422);
    expect(extra.json.detail).toEqual([
      { loc: ["body", "transferDirection"], msg: "Extra inputs are not permitted", type: "extra_forbidden" },
    ]);
    const call = await jsonrpc("watch_getTransfers", [{ fromBlock: "soon" }]);
    expect(call.json.error.code).toBe(-32602);
    expect(call.json.error.message).toContain("fromBlock");
  });
});

describe("what else the index holds", () => {
  test("the growing tables are partitioned by block range, rows in the partition of their block, one made ahead", async () => {
    const sql = postgres(service.databaseUrl, { max: 1 });
    try {
      const partitions = await sql`select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
        from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'transfers'::regclass order by c.relname`;
      const last = Math.floor(movements.head / 10);
      // Every partition up to the head's, and the next.
      expect(partitions.map((p) => ({ ...p }))).toEqual(
        Array.from({ length: last + 2 }, (_, k) => ({
          name: `transfers_p${k}`,
          bound: `FOR VALUES FROM ('${k * 10}') TO ('${(k + 1) * 10}')`,
        })) as never,
      );
      const misplaced =
        await sql`select count(*)::int as n from transfers t join pg_class c on c.oid = t.tableoid
        where c.relname <> 'transfers_p' || (t.block_number / 10)`;
      expect(misplaced[0]!.n).toBe(0);
      const used = await sql`select count(distinct tableoid)::int as n from transfers`;
      expect(used[0]!.n).toBeGreaterThanOrEqual(2);
    } finally {
      await sql.end();
    }
  });

  test("ERC-20 approvals, for the watch filters", async () => {
    const sql = postgres(service.databaseUrl, { max: 1 });
    try {
      const rows = await sql`select block_number::int as "blockNumber", log_index as "logIndex",
          '0x' || encode(contract_address, 'hex') as contract, '0x' || encode(owner, 'hex') as owner,
          '0x' || encode(spender, 'hex') as spender, value::text as value
        from approvals order by block_number, log_index`;
      expect(rows.map((r) => ({ ...r }))).toEqual(
        movements.approvals.map((a) => ({
          blockNumber: a.blockNumber,
          logIndex: a.logIndex,
          contract: a.contract,
          owner: a.owner,
          spender: a.spender,
          value: a.value.toString(),
        })) as never,
      );
      expect(movements.approvals).toHaveLength(1);
    } finally {
      await sql.end();
    }
  });

  test("the embedded PostgreSQL (PGlite) indexes the same, with the same code", async () => {
    const embedded = await startTestService({
      upstreamUrls: [movements.url],
      databaseUrl: null,
      env: INDEX_ENV,
    });
    try {
      const expected = page(movements.transfers);
      const list = () => post(`${embedded.url}/node/rest/watch_getTransfers`, { limit: 500 });
      await until(
        "the embedded index to catch up",
        async () => ((await list()).text === expected ? true : undefined),
        60_000,
      );
      expect((await list()).text).toBe(expected);
      const health = (await (await fetch(`${embedded.url}/health`)).json()) as any;
      expect(health.database.embedded).toBe(true);
      const date = { date: "2024-02-29" };
      expect((await post(`${embedded.url}/node/rest/watch_getBlockNumbersByDay`, date)).json).toEqual(
        (await rest("watch_getBlockNumbersByDay", date)).json,
      );
      const stats = { timestamp: LEAP_DAY };
      expect((await post(`${embedded.url}/node/rest/watch_getStatsByDay`, stats)).text).toBe(
        (await rest("watch_getStatsByDay", stats)).text,
      );
    } finally {
      await embedded.stop();
    }
  }, 90_000);

  test("/health shows the indexer caught up", async () => {
    const health = (await (await fetch(`${service.url}/health`)).json()) as any;
    expect(health.indexer).toEqual({
      lastBlockNumber: movements.head,
      headBlockNumber: movements.head,
      lag: 0,
      leading: true,
    });
  });
});

describe("block time", () => {
  const at = async (timestamp: number) => {
    const answer = await rest("watch_getBlockNumberByTimestamp", { timestamp });
    const call = await jsonrpc("watch_getBlockNumberByTimestamp", [timestamp]);
    expect(call.json.result ?? call.json.error).toEqual(
      answer.status === 200 ? answer.json : call.json.error,
    );
    return answer;
  };

  test("at each block's own time, between blocks, after the head", async () => {
    for (const block of blocks) {
      expect((await at(block.timestamp)).json).toBe(block.number);
      const next = blocks[block.number + 1];
      if (next && next.timestamp > block.timestamp + 1) {
        expect((await at(block.timestamp + 1)).json).toBe(block.number);
        expect((await at(next.timestamp - 1)).json).toBe(block.number);
      }
    }
    const last = blocks.at(-1)!;
    expect((await at(last.timestamp + 10 * DAY)).json).toBe(movements.head);
    expect((await at(Number.MAX_SAFE_INTEGER)).json).toBe(movements.head);
  });

  test("before the first block: not found", async () => {
    const answer = await at(GENESIS_TIME - 1);
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({ detail: `no block has a timestamp at or before ${GENESIS_TIME - 1}` });
    const call = await jsonrpc("watch_getBlockNumberByTimestamp", [0]);
    expect(call.json).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32001, message: "no block has a timestamp at or before 0" },
    });
  });

  const dayOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
  const blocksOf = (date: string) => blocks.filter((b) => dayOf(b.timestamp) === date);

  test("blocks by UTC day, across midnights, a leap day and a day without blocks", async () => {
    // The chain was laid out so: a block one second before midnight, one at midnight exactly.
    expect(blocks.some((b) => b.timestamp === LEAP_DAY - 1)).toBe(true);
    expect(blocks.some((b) => b.timestamp === LEAP_DAY)).toBe(true);
    for (const date of ["2024-02-28", "2024-02-29", "2024-03-01", "2024-03-03"]) {
      const list = blocksOf(date);
      expect(list.length).toBeGreaterThan(0);
      const range = {
        date,
        fromBlock: list[0]!.number,
        toBlock: list.at(-1)!.number,
        blockCount: list.length,
      };
      expect((await rest("watch_getBlockNumbersByDay", { date })).json).toEqual(range);
      expect((await jsonrpc("watch_getBlockNumbersByDay", [date])).json.result).toEqual(range);
    }
    for (const date of ["2024-02-27", "2024-03-02", "2024-03-04", "1970-01-01"]) {
      const answer = await rest("watch_getBlockNumbersByDay", { date });
      expect({ date, status: answer.status, text: answer.text }).toEqual({ date, status: 200, text: "null" });
    }
    const impossible = await rest("watch_getBlockNumbersByDay", { date: "2023-02-29" });
    expect(impossible.status).toBe(422);
    expect(impossible.json).toEqual({ detail: "invalid params: date: 2023-02-29 is not a calendar date" });
  });

  test("stats by day equal the sums over the day's blocks and receipts", async () => {
    const zero = "0x0000000000000000000000000000000000000000";
    for (const date of ["2024-02-28", "2024-02-29", "2024-03-01", "2024-03-03"]) {
      const list = blocksOf(date);
      const numbers = new Set(list.map((b) => b.number));
      const active = new Set<string>();
      let transactions = 0n;
      let gasUsed = 0n;
      let gasPrices = 0n;
      let fees = 0n;
      let burnt = 0n;
      for (const block of list) {
        burnt += BigInt(block.raw.baseFeePerGas) * BigInt(block.raw.gasUsed);
        gasUsed += BigInt(block.raw.gasUsed);
        for (const [i, tx] of (block.raw.transactions as any[]).entries()) {
          const receipt = block.receipts[i];
          transactions++;
          gasPrices += BigInt(receipt.effectiveGasPrice);
          fees += BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
          active.add(tx.from.toLowerCase());
          active.add((tx.to ?? receipt.contractAddress).toLowerCase());
        }
      }
      const transfers = movements.transfers.filter((t) => numbers.has(t.blockNumber));
      for (const t of transfers) {
        active.add(t.from);
        if (t.to) active.add(t.to);
      }
      active.delete(zero);
      const expected = {
        date,
        fromBlock: list[0]!.number,
        toBlock: list.at(-1)!.number,
        blockCount: list.length,
        transactionCount: Number(transactions),
        transferCount: transfers.length,
        activeAddresses: active.size,
        totalGasUsed: Number(gasUsed),
        averageGasPrice: Number(gasPrices / (transactions || 1n)),
        totalFees: Number(fees),
        burntFees: Number(burnt),
        minersReward: Number(fees - burnt),
        uncleBlockReward: 0,
      };
      // Any second of the day names it.
      const midday = Date.parse(`${date}T12:34:56Z`) / 1000;
      const answer = await rest("watch_getStatsByDay", { timestamp: midday });
      expect(answer.json).toEqual(expected);
      expect(answer.text).toContain(`"totalFees":${fees}`);
      expect(
        (await jsonrpc("watch_getStatsByDay", [Date.parse(`${date}T00:00:00Z`) / 1000])).json.result,
      ).toEqual(expected);
    }
    expect((await rest("watch_getStatsByDay", { timestamp: LEAP_DAY + 2 * DAY + 5 })).text).toBe("null");
    expect((await rest("watch_getStatsByDay", { timestamp: 9_000_000_000_000 })).text).toBe("null");
  });
});
