/**
 * The Bitcoin family's index (sql/utxo/007_utxo_index.sql) against a real regtest Litecoin Core and a real
 * PostgreSQL: the shared test chain (support/utxoChain.ts: legacy, p2sh-segwit and bech32 outputs, several
 * inputs and outputs, change back to a sender, a consolidation, OP_RETURN, a coinbase to a watched address,
 * three UTC days with a block whose time is below its parent's, a mempool) is indexed by the service
 * (CHAIN=LTC, INDEXER=on), and every row must be what the node's own answers imply (`truth`, computed
 * exactly from getblock and getrawtransaction; each block's fees and sums also checked against the node's
 * getblockstats; each address's totals, sql/utxo/008, the sums of its rows, whatever came before: writes, a
 * reorg, a restart, or the migration filling them in an index written without them). Then: the transfers of
 * each address over JSON-RPC and REST, an index from a later block (older prevouts read from the node), a
 * reorg by invalidateblock (a payment dropped, its other input unspent again, another payment added, the
 * days' figures corrected) followed live by both indexes, and one that leaves an address no row.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../src/db/database";
import { migrate, readMigrations } from "../src/db/migrate";
import { utxo } from "../src/families/utxo/utxo";
import { rfc3339 } from "../src/json";
import { createLogger } from "../src/log";
import { post, startTestService, type TestService } from "./support/service";
import { onTeardown, postgresServer } from "./support/shared";
import { until } from "./support/until";
import {
  OP_RETURN_DATA,
  parseExact,
  type ReorgResult,
  startUtxoChain,
  type Truth,
  type TruthTransfer,
  type UtxoChain,
} from "./support/utxoChain";

/**
 * CONFIRMATIONS: deeper than regtest's default (1), so the reorg here is followed within the depth the chain
 * expects (a reorg past it is test/reorg-past-finality.test.ts's).
 */
const INDEX_ENV = { CHAIN: "LTC", INDEXER: "on", HEAD_POLL_MS: "50", CONFIRMATIONS: "6" };
/** How long an index may take to reach the node's head (it takes well under a second here). */
const CATCH_UP_MS = 60_000;

let chain: UtxoChain;
let service: TestService;
let db: postgres.Sql;
let truth: Truth;

function connect(url: string): postgres.Sql {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  onTeardown(() => sql.end());
  return sql;
}

/** Waits until the index ends at the node's head, with its hash. */
async function caughtUp(sql: postgres.Sql, t: Truth): Promise<void> {
  const tip = t.blocks[t.blocks.length - 1]!;
  await until(
    `the index to reach block ${tip.height}`,
    async () => {
      const [row] = await sql`select s.last_block::text as last, encode(b.hash, 'hex') as hash
        from indexer_state s left join blocks b on b.number = s.last_block`.catch(() => [undefined]);
      return row && Number(row.last) === tip.height && row.hash === tip.hash ? true : undefined;
    },
    CATCH_UP_MS,
  );
}

beforeAll(async () => {
  chain = await startUtxoChain();
  truth = await chain.truth();
  service = await startTestService({ upstreamUrls: [chain.node.url], env: INDEX_ENV });
  db = connect(service.databaseUrl);
  await caughtUp(db, truth);
}, 120_000);

const s = (value: bigint | number) => value.toString();

/** What the index's tables must hold for the truth's blocks, as rows of text. */
function expectedRows(t: Truth) {
  const blocks = t.blocks.map((b) => {
    const txs = b.transactions;
    const spending = txs.filter((tx) => !tx.coinbase);
    const sum = (values: bigint[]) => values.reduce((a, v) => a + v, 0n);
    return {
      number: s(b.height),
      hash: b.hash,
      parent_hash: b.parent,
      timestamp: s(b.timestamp),
      header_time: s(b.time),
      median_time: s(b.medianTime),
      day: b.day,
      size: b.size,
      weight: b.weight,
      transaction_count: txs.length,
      transfer_count: txs.flatMap((tx) => tx.outputs).filter((o) => o.pays).length,
      output_count: txs.flatMap((tx) => tx.outputs).length,
      total_output: s(sum(spending.flatMap((tx) => tx.outputs.map((o) => o.value)))),
      total_fees: s(sum(spending.map((tx) => tx.fee))),
      miners_reward: s(sum(txs.filter((tx) => tx.coinbase).flatMap((tx) => tx.outputs.map((o) => o.value)))),
      total_vsize: s(spending.reduce((a, tx) => a + tx.vsize, 0)),
    };
  });
  const all = t.blocks.flatMap((b) => b.transactions);
  const transactions = all.map((tx) => ({
    block_number: s(tx.height!),
    position: tx.position,
    txid: tx.txid,
    fee: s(tx.fee),
    size: tx.size,
    vsize: tx.vsize,
    weight: tx.weight,
    coinbase: tx.coinbase,
    input_count: tx.inputs.length,
    output_count: tx.outputs.length,
    from_addresses: tx.fromAddresses,
  }));
  const outputs = all.flatMap((tx) =>
    tx.outputs.map((o) => ({
      txid: o.txid,
      vout: o.vout,
      block_number: s(tx.height!),
      position: tx.position,
      address: o.address,
      script: o.script,
      value: s(o.value),
      pays: o.pays,
      spent_txid: o.spentBy?.txid ?? null,
      spent_vin: o.spentBy?.vin ?? null,
      spent_block: o.spentBy ? s(o.spentBy.height) : null,
    })),
  );
  const addressRows = all.flatMap((tx) => {
    const rows = new Map<string, { received: bigint; sent: bigint; outputs: number; inputs: number }>();
    const row = (a: string) =>
      rows.get(a) ?? rows.set(a, { received: 0n, sent: 0n, outputs: 0, inputs: 0 }).get(a)!;
    for (const o of tx.outputs)
      if (o.address !== null)
        Object.assign(row(o.address), {
          received: row(o.address).received + o.value,
          outputs: row(o.address).outputs + 1,
        });
    for (const i of tx.inputs)
      if (i.address !== null)
        Object.assign(row(i.address), {
          sent: row(i.address).sent + i.value,
          inputs: row(i.address).inputs + 1,
        });
    return [...rows].map(([address, r]) => ({
      address,
      block_number: s(tx.height!),
      position: tx.position,
      txid: tx.txid,
      received: s(r.received),
      sent: s(r.sent),
      outputs: r.outputs,
      inputs: r.inputs,
    }));
  });
  const byKey = (a: { address: string; block_number: string; position: number | null }) =>
    `${a.address} ${a.block_number.padStart(12, "0")} ${String(a.position).padStart(6, "0")}`;
  addressRows.sort((a, b) => (byKey(a) < byKey(b) ? -1 : 1));
  return { blocks, transactions, outputs, addressRows, totals: totalsOf(addressRows), days: expectedDays(t) };
}

/** Each address's totals (sql/utxo/008 address_totals) over its rows, as text, by address. */
function totalsOf(
  rows: readonly { address: string; received: string; sent: string; outputs: number; inputs: number }[],
) {
  const totals = new Map<string, bigint[]>();
  for (const r of rows) {
    const t = totals.get(r.address) ?? [0n, 0n, 0n, 0n, 0n];
    [r.outputs, r.received, r.inputs, r.sent, 1].forEach((v, i) => {
      t[i]! += BigInt(v);
    });
    totals.set(r.address, t);
  }
  return [...totals]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([address, t]) => ({
      address,
      funded_count: s(t[0]!),
      funded_sum: s(t[1]!),
      spent_count: s(t[2]!),
      spent_sum: s(t[3]!),
      tx_count: s(t[4]!),
    }));
}

/** Each day's figures (daily_stats), as text. */
function expectedDays(t: Truth) {
  return [...new Set(t.blocks.map((b) => b.day))].map((date) => {
    const d = t.day(date)!;
    return {
      day: date,
      from_block: s(d.fromBlock),
      to_block: s(d.toBlock),
      block_count: d.blockCount,
      transaction_count: s(d.transactionCount),
      transfer_count: s(d.transferCount),
      total_output: s(d.totalOutput),
      total_fees: s(d.totalFees),
      miners_reward: s(d.minersReward),
      active_addresses: s(d.activeAddresses),
      average_fee_rate: s(d.averageFeeRate),
    };
  });
}

/** The index's tables, as rows of text. */
async function indexRows(sql: postgres.Sql) {
  const blocks =
    await sql`select number::text, encode(hash, 'hex') as hash, encode(parent_hash, 'hex') as parent_hash,
      timestamp::text, header_time::text, median_time::text, day::text, size, weight, transaction_count,
      transfer_count, output_count, total_output::text, total_fees::text, miners_reward::text, total_vsize::text
    from blocks b order by b.number`;
  const transactions =
    await sql`select block_number::text, position, encode(txid, 'hex') as txid, fee::text, size,
      vsize, weight, coinbase, input_count, output_count, from_addresses
    from transactions t order by t.block_number, t.position`;
  const outputs = await sql`select encode(txid, 'hex') as txid, vout, block_number::text, position, address,
      encode(script, 'hex') as script, value::text, pays, encode(spent_txid, 'hex') as spent_txid, spent_vin,
      spent_block::text
    from outputs o order by o.block_number, o.position, o.vout`;
  const addressRows = await sql`select address, block_number::text, position, encode(txid, 'hex') as txid,
      received::text, sent::text, outputs, inputs
    from address_transactions a order by a.address collate "C", a.block_number, a.position`;
  const totals = await sql`select address, funded_count::text, funded_sum::text, spent_count::text,
      spent_sum::text, tx_count::text
    from address_totals order by address collate "C"`;
  const days = await sql`select d.day::text, from_block::text, to_block::text, block_count,
      transaction_count::text, transfer_count::text, total_output::text, total_fees::text, miners_reward::text,
      active_addresses::text, (select count(*) from day_addresses a where a.day = d.day)::text as pairs,
      (case when total_vsize = 0 then 0 else floor(total_fees / total_vsize) end)::text as average_fee_rate
    from daily_stats d order by day`;
  const plain = (rows: readonly object[]) => rows.map((r) => ({ ...r }));
  return {
    blocks: plain(blocks),
    transactions: plain(transactions),
    outputs: plain(outputs),
    addressRows: plain(addressRows),
    totals: plain(totals),
    // The count the writer keeps is the day's pairs, whatever writes and rewinds came before.
    days: plain(days).map(({ pairs, ...day }: any) => {
      expect(pairs).toBe(day.active_addresses);
      return day;
    }),
  };
}

/** Every table of the index equals what the truth implies. */
async function expectIndexOf(sql: postgres.Sql, t: Truth): Promise<void> {
  const expected = expectedRows(t);
  const actual = await indexRows(sql);
  expect(actual.blocks).toEqual(expected.blocks);
  expect(actual.transactions).toEqual(expected.transactions);
  expect(actual.outputs).toEqual(expected.outputs);
  expect(actual.addressRows).toEqual(expected.addressRows);
  expect(actual.totals).toEqual(expected.totals);
  expect(actual.days).toEqual(expected.days);
}

describe("the index equals what the node's answers imply", () => {
  test("every block, transaction, output, spend, address row and day", async () => {
    await expectIndexOf(db, truth);
    // The chain's cases are all there.
    const outputs = truth.blocks.flatMap((b) => b.transactions.flatMap((tx) => tx.outputs));
    // The genesis block's coinbase pays a public key (P2PK).
    expect(new Set(outputs.map((o) => o.type))).toEqual(
      new Set(["pubkey", "witness_v0_keyhash", "pubkeyhash", "scripthash", "nulldata"]),
    );
    expect(truth.blocks.length).toBe(chain.blocks.tip + 1);
  });

  test("each block's fees, outputs, transactions and reward are the node's own getblockstats", async () => {
    const rows = await db`select number, transaction_count, total_output::text, total_fees::text,
        miners_reward::text from blocks where number > 0 order by number`;
    for (const row of rows) {
      const stats = await chain.node.rpc("getblockstats", [Number(row.number)]);
      expect({
        number: Number(row.number),
        txs: row.transaction_count,
        total_out: row.total_output,
        totalfee: row.total_fees,
        reward: row.miners_reward,
      }).toEqual({
        number: stats.height,
        txs: stats.txs,
        total_out: String(stats.total_out),
        totalfee: String(stats.totalfee),
        reward: String(BigInt(stats.subsidy) + BigInt(stats.totalfee)),
      });
    }
  });

  test("the coinbase paid to a watched address: fee 0, its output a transfer from `coinbase`", async () => {
    const tx = truth.transactions.get(chain.txs.coinbase)!;
    expect(tx.height).toBe(chain.blocks.coinbase);
    const [row] = await db`select fee::text, coinbase, from_addresses from transactions
      where txid = decode(${chain.txs.coinbase}, 'hex')`;
    expect({ ...row }).toEqual({ fee: "0", coinbase: true, from_addresses: [] });
    const paid =
      await db`select address, value::text, pays from outputs where txid = decode(${chain.txs.coinbase}, 'hex')
      order by vout`;
    // The reward to the watched address, and the witness commitment (OP_RETURN, no address).
    expect(paid.map((r) => ({ ...r }))).toEqual([
      { address: chain.addresses.coinbase, value: "5000000000", pays: true },
      { address: null, value: "0", pays: false },
    ]);
  });

  test("OP_RETURN, change back to the sender and a consolidation pay no one", async () => {
    const opReturn =
      await db`select vout, address, encode(script, 'hex') as script, value::text, pays from outputs
      where txid = decode(${chain.txs.opReturn}, 'hex') order by vout`;
    expect({ ...opReturn[0] }).toEqual({
      vout: 0,
      address: null,
      script: `6a${(OP_RETURN_DATA.length / 2).toString(16).padStart(2, "0")}${OP_RETURN_DATA}`,
      value: "0",
      pays: false,
    });
    // bech32 pays legacy and external; its change to itself is no transfer.
    expect(opReturn.map((r) => [r.address, r.pays])).toEqual([
      [null, false],
      [chain.addresses.legacy, true],
      [chain.addresses.external, true],
      [chain.addresses.bech32, false],
    ]);
    const change = await db`select address, pays from outputs where txid = decode(${chain.txs.change}, 'hex')
      order by vout`;
    expect(change.map((r) => [r.address, r.pays])).toEqual([
      [chain.addresses.bech32, true],
      [chain.addresses.p2sh, false],
    ]);
    const consolidation = await db`select count(*)::int as n from outputs
      where txid = decode(${chain.txs.consolidation}, 'hex') and pays`;
    expect(consolidation[0]!.n).toBe(0);
    // Three inputs of legacy: its row says what it spent and got back; the difference is the fee.
    const [row] = await db`select received::text, sent::text, outputs, inputs from address_transactions
      where address = ${chain.addresses.legacy} and txid = decode(${chain.txs.consolidation}, 'hex')`;
    const tx = truth.transactions.get(chain.txs.consolidation)!;
    expect(tx.inputs).toHaveLength(3);
    expect({ ...row }).toEqual({
      received: s(tx.outputs[0]!.value),
      sent: s(tx.outputs[0]!.value + tx.fee),
      outputs: 1,
      inputs: 3,
    });
  });

  test("a block whose time is below its parent's keeps its parent's time and day", async () => {
    const [parent, block] = await db`select number, header_time::text, timestamp::text, day::text from blocks
      where number in (${chain.blocks.backInTime - 1}, ${chain.blocks.backInTime}) order by number`;
    expect(BigInt(block!.header_time)).toBeLessThan(BigInt(parent!.header_time));
    expect(block!.timestamp).toBe(parent!.timestamp);
    // Its header's day is the first; its running maximum's, the second.
    expect(truth.dayOf(Number(block!.header_time))).toBe(chain.days[0]);
    expect([parent!.day, block!.day]).toEqual([chain.days[1], chain.days[1]]);
  });

  test("the mempool's transactions are not in the index, and what they spend is unspent there", async () => {
    expect(truth.mempool.map((tx) => tx.txid).sort()).toEqual(
      [chain.txs.pendingIn, chain.txs.pendingOut].sort(),
    );
    const pending = await db`select count(*)::int as n from transactions
      where txid = any(array[decode(${chain.txs.pendingIn}, 'hex'), decode(${chain.txs.pendingOut}, 'hex')])`;
    expect(pending[0]!.n).toBe(0);
    const spent = truth.transactions.get(chain.txs.pendingOut)!.inputs[0]!;
    const [row] =
      await db`select spent_txid from outputs where txid = decode(${spent.txid}, 'hex') and vout = ${spent.vout}`;
    expect(row!.spent_txid).toBeNull();
  });
});

describe("an index written before address totals (sql/utxo/008)", () => {
  test("gets them from its rows as 008 is applied", async () => {
    const old = connect(await (await postgresServer()).createDatabase());
    const migrations = readMigrations(utxo.index!.migrations);
    const log = createLogger({ level: "silent" });
    await migrate(
      old as Sql,
      log,
      {},
      migrations.filter((m) => m.version < 8),
    );
    const [row] = await db`select coalesce(json_agg(a), '[]')::text as rows from address_transactions a`;
    await old`insert into address_transactions
      select * from json_populate_recordset(null::address_transactions, ${row!.rows}::text::json)`;
    // 008 alone: the files after it (013's bulk_load) are not what this checks.
    expect(
      await migrate(
        old as Sql,
        log,
        {},
        migrations.filter((m) => m.version <= 8),
      ),
    ).toEqual([8]);
    const totals = await old`select address, funded_count::text, funded_sum::text, spent_count::text,
        spent_sum::text, tx_count::text
      from address_totals order by address collate "C"`;
    expect(totals.map((r) => ({ ...r }))).toEqual(expectedRows(truth).totals);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Transfers (the family's TransferQueries, through the shared operation).

/** A transfer row as the operation writes it (docs/interface.md §16.5), from the truth. */
function transferJson(t: TruthTransfer): string {
  return `{"blockNumber":${t.blockNumber},"blockTimestamp":"${rfc3339(t.timestamp)}","transactionHash":"${t.transactionHash}","transactionIndex":${t.transactionIndex},"logIndex":${t.logIndex},"contractAddress":null,"transferType":"trx","from":"${t.from}","fromAddresses":${JSON.stringify(t.fromAddresses)},"to":"${t.to}","value":${t.value},"fee":${t.fee},"transactionError":false,"asset":"LTC","decimals":8}`;
}
const page = (list: TruthTransfer[]) => `[${list.map(transferJson).join(",")}]`;
const rest = (name: string, body: unknown) => post(`${service.url}/node/rest/${name}`, body);
const jsonrpc = (method: string, params: unknown[]) =>
  post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id: 1, method, params });

describe("transfers", () => {
  test("of each address, either side and each side, over REST and JSON-RPC, exactly", async () => {
    const { legacy, p2sh, bech32, coinbase, external, miner } = chain.addresses;
    for (const address of [legacy, p2sh, bech32, coinbase, external, miner]) {
      for (const direction of [undefined, "from", "to"] as const) {
        const expected = page(truth.transfers(address, { direction }));
        const body = { addresses: address, transferDirection: direction ?? null, limit: 500 };
        const answer = await rest("watch_getTransfersByAddress", body);
        expect(answer.status).toBe(200);
        expect(answer.text).toBe(expected);
        const call = await jsonrpc("watch_getTransfersByAddress", [body]);
        expect(call.text).toBe(`{"jsonrpc":"2.0","id":1,"result":${expected}}`);
      }
    }
    // The rows a sender's change and a consolidation would have made are not there; multiFrom is from both
    // of its input addresses, in input order.
    const multiFrom = truth
      .transfers(p2sh, { direction: "from" })
      .filter((t) => t.transactionHash === chain.txs.multiFrom);
    expect(multiFrom.map((t) => [t.from, t.fromAddresses, t.to])).toEqual([
      [bech32, [bech32, p2sh], external],
      [bech32, [bech32, p2sh], legacy],
    ]);
    expect(truth.transfers(coinbase).map((t) => t.from)).toEqual(["coinbase"]);
  });

  test("several addresses: each row once", async () => {
    const { legacy, bech32, p2sh } = chain.addresses;
    for (const direction of [undefined, "from", "to"] as const) {
      const body = { addresses: [legacy, bech32, p2sh], transferDirection: direction ?? null, limit: 500 };
      const expected = truth.transfers([legacy, bech32, p2sh], { direction });
      expect((await rest("watch_getTransfersByAddress", body)).text).toBe(page(expected));
    }
    // multiFrom has two of them as inputs: its rows come once each.
    const rows = truth.transfers([bech32, p2sh], { direction: "from" });
    expect(rows.filter((t) => t.transactionHash === chain.txs.multiFrom)).toHaveLength(2);
  });

  test("paging and block ranges", async () => {
    const { miner, legacy } = chain.addresses;
    const all = truth.transfers(miner);
    const seen: unknown[] = [];
    for (let offset = 0; offset < all.length + 7; offset += 7) {
      const answer = await rest("watch_getTransfersByAddress", { addresses: miner, offset, limit: 7 });
      seen.push(...(parseExact(answer.text) as unknown[]));
    }
    expect(JSON.stringify(seen)).toBe(JSON.stringify(parseExact(page(all))));
    const range = { fromBlock: chain.blocks.midnight, toBlock: chain.blocks.tip - 1 };
    expect((await rest("watch_getTransfersByAddress", { addresses: legacy, ...range })).text).toBe(
      page(truth.transfers(legacy, range)),
    );
    expect((await rest("watch_getTransfers", { ...range, limit: 500 })).text).toBe(
      page(truth.allTransfers(range)),
    );
    expect((await rest("watch_getTransfers", { limit: 500 })).text).toBe(
      page(truth.allTransfers().slice(0, 500)),
    );
  });
});

describe("the embedded PostgreSQL (PGlite)", () => {
  test("indexes the same, with the same code", async () => {
    const embedded = await startTestService({
      upstreamUrls: [chain.node.url],
      databaseUrl: null,
      env: INDEX_ENV,
    });
    try {
      const expected = page(truth.allTransfers());
      const list = () => post(`${embedded.url}/node/rest/watch_getTransfers`, { limit: 500 });
      await until(
        "the embedded index to catch up",
        async () => ((await list()).text === expected ? true : undefined),
        CATCH_UP_MS,
      );
      const { legacy } = chain.addresses;
      const body = { addresses: legacy, limit: 500 };
      expect((await post(`${embedded.url}/node/rest/watch_getTransfersByAddress`, body)).text).toBe(
        page(truth.transfers(legacy)),
      );
    } finally {
      await embedded.stop();
    }
  }, 90_000);
});

// ---------------------------------------------------------------------------------------------------------
// An index from a later block, the reorg, a restart.

let later: { service: TestService; db: postgres.Sql; from: number };

describe("an index from INDEX_FROM_BLOCK > 0", () => {
  test("reads the outputs older than its first block from the node: fees and senders exact", async () => {
    const from = chain.blocks.midnight;
    const laterService = await startTestService({
      upstreamUrls: [chain.node.url],
      env: { ...INDEX_ENV, INDEX_FROM_BLOCK: String(from) },
    });
    later = { service: laterService, db: connect(laterService.databaseUrl), from };
    const partial = await chain.truth({ fromBlock: from });
    await caughtUp(later.db, partial);
    await expectIndexOf(later.db, partial);
    // consolidation (in the block after) spends three outputs of blocks before the index: its fee, its
    // inputs' address, from the node.
    const [row] = await later.db`select fee::text, from_addresses from transactions
      where txid = decode(${chain.txs.consolidation}, 'hex')`;
    expect({ ...row }).toEqual({
      fee: s(truth.transactions.get(chain.txs.consolidation)!.fee),
      from_addresses: [chain.addresses.legacy],
    });
    // Its first block's time is the running maximum from block 0.
    const [first] = await later.db`select timestamp::text from blocks order by number limit 1`;
    expect(first!.timestamp).toBe(s(truth.blocks[from]!.timestamp));
  }, 120_000);
});

describe("a reorg by invalidateblock", () => {
  let reorg: ReorgResult;
  let before: Truth;
  let after: Truth;

  beforeAll(async () => {
    before = truth;
    reorg = await chain.reorg();
    after = await chain.truth();
    await caughtUp(db, after);
  }, 120_000);

  test("the index is the new branch's, exactly", async () => {
    expect(after.tip).toBe(before.tip + 1);
    await expectIndexOf(db, after);
  });

  test("the dropped payment is gone, its other input unspent again, the added one there", async () => {
    const count = async (txid: string) =>
      (await db`select count(*)::int as n from transactions where txid = decode(${txid}, 'hex')`)[0]!.n;
    expect(await count(reorg.droppedTxid)).toBe(0);
    expect(await count(reorg.addedTxid)).toBe(1);
    const [unspent] = await db`select spent_txid, spent_block from outputs
      where txid = decode(${reorg.unspent.txid}, 'hex') and vout = ${reorg.unspent.vout}`;
    expect({ ...unspent }).toEqual({ spent_txid: null, spent_block: null });
    const removed = await db`select count(*)::int as n from blocks
      where encode(hash, 'hex') = any(${reorg.removed}::text[])`;
    expect(removed[0]!.n).toBe(0);
    // The payments as transfers: legacy's is gone, bech32's is there.
    const { legacy, bech32 } = chain.addresses;
    const legacyRows = parseExact<{ transactionHash: string }[]>(
      (await rest("watch_getTransfersByAddress", { addresses: legacy, limit: 500 })).text,
    );
    expect(legacyRows.some((t) => t.transactionHash === reorg.droppedTxid)).toBe(false);
    expect((await rest("watch_getTransfersByAddress", { addresses: bech32, limit: 500 })).text).toBe(
      page(after.transfers(bech32)),
    );
    expect(after.transfers(bech32).some((t) => t.transactionHash === reorg.addedTxid)).toBe(true);
  });

  test("the day's figures are corrected", async () => {
    const day = chain.days[2];
    expect(after.day(day)).not.toEqual(before.day(day));
    const [row] = await db`select block_count, total_fees::text, transfer_count::text from daily_stats
      where day = ${day}::date`;
    const expected = after.day(day)!;
    expect({ ...row }).toEqual({
      block_count: expected.blockCount,
      total_fees: s(expected.totalFees),
      transfer_count: s(expected.transferCount),
    });
  });

  test("an index from a later block follows it too", async () => {
    const partial = await chain.truth({ fromBlock: later.from });
    await caughtUp(later.db, partial);
    await expectIndexOf(later.db, partial);
  });
});

describe("an address only a block the chain dropped paid", () => {
  test("loses its totals with its rows: the totals are its rows' sums again", async () => {
    const payee = await chain.node.rpc<string>("getnewaddress", ["", "bech32"]);
    const coin = await chain.minerCoin();
    const txid = await chain.spend([coin], [{ address: payee, value: coin.value - 100_000n }]);
    const block = await chain.mineWith([txid]);
    await caughtUp(db, await chain.truth());
    const totalsOf = () => db`select tx_count::int as n from address_totals where address = ${payee}`;
    expect((await totalsOf()).map((r) => r.n)).toEqual([1]);
    // The block leaves the chain (its payment back in the mempool), two empty ones replace it.
    await chain.node.rpc("invalidateblock", [block]);
    await chain.mineWith([]);
    await chain.mineWith([]);
    const now = await chain.truth();
    expect(now.mempool.map((tx) => tx.txid)).toContain(txid);
    await caughtUp(db, now);
    await expectIndexOf(db, now);
    expect((await totalsOf()).map((r) => r.n)).toEqual([]);
  }, 120_000);
});

describe("a restart", () => {
  test("resumes where the index ended: blocks mined meanwhile (the mempool's transactions) indexed exactly", async () => {
    await service.stop();
    await chain.mine(2);
    const now = await chain.truth();
    expect(now.mempool).toEqual([]);
    service = await startTestService({
      upstreamUrls: [chain.node.url],
      databaseUrl: service.databaseUrl,
      env: INDEX_ENV,
    });
    await caughtUp(db, now);
    await expectIndexOf(db, now);
    const mined = await db`select count(*)::int as n from transactions
      where txid = any(array[decode(${chain.txs.pendingIn}, 'hex'), decode(${chain.txs.pendingOut}, 'hex')])`;
    expect(mined[0]!.n).toBe(2);
  }, 120_000);
});
