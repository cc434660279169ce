/**
 * The README's section "In front of a TRON node": its examples run verbatim (the port 8000 they name
 * replaced by the test's, the key added, or put where the README writes `<KEY>`) against the service
 * (INDEXER=on) in front of the stand-in java-tron. The gateway's answers are checked against the stand-in's
 * own answer to the same question, its refusals as the README shows them; the index's, the watch filter's and
 * TronGrid's v1 answers against what the stand-in's chain holds (test/support/tron/truth.ts and the
 * scenario's own transactions, never the index).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { codeBlocks, curlCommands, readmeSection, runCurl } from "./support/readme";
import { startTestService, type TestService } from "./support/service";
import { hexToBase58 } from "./support/tron/codec";
import * as truth from "./support/tron/truth";
import { SCENARIO_KEYS, type SignedTx, startTronNode, TRC10, TRC20, type TronNode } from "./support/tronNode";
import { until } from "./support/until";

const KEY = "tron-readme-key";
/** Following the head, and the index's backfill of the stand-in's 25 blocks. */
const SETTLE_MS = 30_000;
const { alice, bob } = SCENARIO_KEYS;
/**
 * Base58 of the TRC-20 by the stand-in's codec, not the service's (not tronweb's either: its protobuf modules,
 * loaded by two test files of one run at once, sometimes fail to load under bun test).
 */
const USDT = hexToBase58(TRC20.address);
const TRX_DECIMALS = 6;

let node: TronNode;
let service: TestService;

beforeAll(async () => {
  node = await startTronNode({ network: "NILE" });
  service = await startTestService({
    upstreamUrls: [node.url],
    env: { CHAIN: "NILE", API_KEYS: KEY, HEAD_POLL_MS: "100", INDEXER: "on", INDEX_FROM_BLOCK: "0" },
  });
});
afterAll(async () => {
  await service?.stop();
  await node?.stop();
});

const section = readmeSection("## In front of a TRON node");
const commands = curlCommands(codeBlocks(section, "sh")[1]!);
/** A command run as the README writes it; a `<KEY>` in its path is the key, sent nowhere else. */
const run = (command: string) =>
  command.includes("<KEY>")
    ? runCurl(command.replace("<KEY>", KEY), service.url, undefined)
    : runCurl(command, service.url, KEY);

/** The stand-in's own answer to a path of its HTTP API. */
async function direct(path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

async function directRpc(method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(`${node.url}/jsonrpc`, {
    method: "POST",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

test("the gateway's examples answer what the stand-in's own answers say, and its refusals as it shows them", async () => {
  expect(commands).toHaveLength(13);
  // The service has followed the stand-in's head (no block comes meanwhile: the stand-in mines on demand).
  const head = node.chain.headNumber();
  await until(
    "the service to follow the stand-in's head",
    async () => ((await run(commands[3]!))[1].result === `0x${head.toString(16)}` ? true : undefined),
    SETTLE_MS,
  );
  const answers: any[] = [];
  for (const command of commands.slice(0, 6)) answers.push(await run(command));
  const [now, byNumber, blockInfos, batch, refusedPath, refusedMethod] = answers;
  expect(now).toEqual(await direct("/wallet/getnowblock", {}));
  expect(now.block_header.raw_data.number).toBe(head);
  expect(byNumber).toEqual(await direct("/wallet/getblockbynum", { num: 1 }));
  expect(blockInfos).toEqual(await direct("/walletsolidity/gettransactioninfobyblocknum?num=2"));
  // Block 2 holds the scenario's TRC-20 transfer and its reverted one: two infos.
  expect(blockInfos.map((i: { id: string }) => i.id)).toEqual([
    node.scenario.trc20.txID,
    node.scenario.reverted.txID,
  ]);
  const solidified = node.chain.solidifiedNumber();
  expect(batch).toEqual([
    {
      jsonrpc: "2.0",
      id: 1,
      result: await directRpc("eth_getBlockByNumber", [`0x${solidified.toString(16)}`, false]),
    },
    { jsonrpc: "2.0", id: 2, result: `0x${head.toString(16)}` },
  ]);
  // The answers the README shows, exactly.
  const [shownPath, shownMethod] = codeBlocks(section, "json")[0]!.split("\n");
  expect(refusedPath).toEqual(JSON.parse(shownPath!));
  expect(refusedMethod).toEqual(JSON.parse(shownMethod!));
});

// ---------------------------------------------------------------------------------------------------------
// The index's examples, against the chain's truth

const blockOf = (tx: SignedTx) => node.chain.transaction(tx.txID)!.blockNumber;
const timeOf = (tx: SignedTx) => node.chain.blocks[blockOf(tx)]!.header.raw_data.timestamp;
const feeOf = (tx: SignedTx) => node.chain.info(tx.txID)!.fee ?? 0;
const word20 = (hex41: string) => `0x${hex41.slice(2)}`;

/** A transfer row as the interface answers it (part 1's chain has no internal transfers: logIndex as is). */
const transferJson = (r: truth.TransferRow) => ({
  blockNumber: r.blockNumber,
  blockTimestamp: r.blockTimestamp,
  transactionHash: r.transactionHash,
  transactionIndex: r.transactionIndex,
  logIndex: r.logIndex,
  contractAddress: r.contractAddress,
  transferType: r.transferType,
  from: r.from,
  to: r.to,
  value: Number(r.value),
  fee: r.fee,
  transactionError: r.transactionError,
  asset: r.asset,
  decimals: r.decimals,
});

/** A day's figures as watch_getStatsByDay answers them (energyFee and netFee: the day's receipts' sums). */
function dayJson(d: truth.DayFigures) {
  const infos = node.chain.blocks
    .filter((b) => b.number >= d.fromBlock && b.number <= d.toBlock)
    .flatMap((b) => b.infos);
  return {
    date: d.date,
    fromBlock: d.fromBlock,
    toBlock: d.toBlock,
    blockCount: d.blockCount,
    transactionCount: d.transactionCount,
    transferCount: d.transferCount,
    trxTransferCount: d.trxTransferCount,
    trc20TransferCount: d.trc20TransferCount,
    activeAddresses: d.activeAddresses,
    trxMoved: Number(d.trxMoved),
    totalFees: Number(d.feesBurned),
    energyFee: infos.reduce((a, i) => a + (i.receipt.energy_fee ?? 0), 0),
    netFee: infos.reduce((a, i) => a + (i.receipt.net_fee ?? 0), 0),
    energyUsed: d.energyUsed,
    bandwidthUsed: d.bandwidthUsed,
  };
}

/** TronGrid's envelope of one page, `at` the time it answered. */
const envelope = (data: unknown[]) => ({
  data,
  success: true,
  meta: { at: expect.any(Number), page_size: data.length },
});

test("the index's, TronGrid's v1 and the watch filter's examples answer what the stand-in's chain holds", async () => {
  const head = node.chain.headNumber();
  await until(
    "the index to reach the stand-in's head",
    async () => {
      const r = await fetch(`${service.url}/watch_filters/lastBlockNumber`, {
        headers: { "x-api-key": KEY },
      });
      return ((await r.json()) as { block_number?: number }).block_number === head ? true : undefined;
    },
    SETTLE_MS,
  );
  const [transfers, day, balances, trc20, events, added, checked] = commands.slice(6);

  // alice's transfers: one of each type the README names, and exactly the truth's.
  const alices = truth.transfers(node.chain).filter((r) => r.from === alice.base58 || r.to === alice.base58);
  expect(alices.map((r) => r.transferType)).toEqual(["trx", "trc10", "erc20transfer"]);
  expect(await run(transfers!)).toEqual(alices.map(transferJson));

  // The day holding the time the README names: the chain's blocks 0 to 9, as it says.
  const time = Number(/"timestamp": (\d+)/.exec(day!)![1]);
  const figures = truth
    .dailyFigures(node.chain)
    .find((d) => d.date === new Date(time * 1000).toISOString().slice(0, 10))!;
  expect({ fromBlock: figures.fromBlock, toBlock: figures.toBlock }).toEqual({ fromBlock: 0, toBlock: 9 });
  expect(await run(day!)).toEqual(dayJson(figures));

  // bob's holdings at the head, from genesis and what the chain moved and burned.
  const held = truth.balances(node.chain).get(bob.base58)!;
  const item = (contractAddress: string, balance: bigint | undefined, decimals: number) => ({
    contractAddress,
    tokenBalance: String(balance ?? 0n),
    decimals,
    error: null,
  });
  expect(await run(balances!)).toEqual({
    address: bob.base58,
    tokenBalances: [
      item("TRX", held.trx, TRX_DECIMALS),
      item(USDT, held.trc20[USDT], TRC20.decimals),
      item(TRC10.id, held.trc10[TRC10.id], TRC10.precision),
    ],
  });

  // TronGrid's v1 API: the scenario's USDT transfer (the reverted one moved nothing, so is no row).
  const transfer = node.scenario.trc20;
  const moved = truth
    .transfers(node.chain)
    .find((r) => r.transactionHash === transfer.txID && r.transferType === "erc20transfer")!;
  expect({ from: moved.from, to: moved.to }).toEqual({ from: alice.base58, to: bob.base58 });
  expect(await run(trc20!)).toEqual(
    envelope([
      {
        transaction_id: transfer.txID,
        token_info: { symbol: TRC20.symbol, address: USDT, decimals: TRC20.decimals, name: TRC20.name },
        block_timestamp: timeOf(transfer),
        from: alice.base58,
        to: bob.base58,
        type: "Transfer",
        value: moved.value,
      },
    ]),
  );
  expect(events).toContain(`/tron/key/<KEY>/v1/transactions/${transfer.txID}/events`);
  expect(await run(events!)).toEqual(
    envelope([
      {
        block_number: blockOf(transfer),
        block_timestamp: timeOf(transfer),
        caller_contract_address: USDT,
        contract_address: USDT,
        event_index: 0,
        event_name: "Transfer",
        result: {
          0: word20(alice.hex),
          1: word20(bob.hex),
          2: moved.value,
          from: word20(alice.hex),
          to: word20(bob.hex),
          value: moved.value,
        },
        result_type: { from: "address", to: "address", value: "uint256" },
        event: "Transfer(address indexed from, address indexed to, uint256 value)",
        transaction_id: transfer.txID,
      },
    ]),
  );

  // The watch filter on bob, and block 2's one result for it: the USDT deposit (bob's reverted call sent no
  // TRX, so it moved nothing of his).
  const { filter_id } = await run(added!);
  expect(filter_id).toEqual(expect.any(String));
  const block = node.chain.blocks[blockOf(transfer)]!;
  expect(await run(checked!)).toEqual({
    filters: [
      {
        from_address: [alice.base58],
        to_address: [bob.base58],
        contract_address: USDT,
        type: "trc20",
        value: { value: Number(moved.value), decimals: TRC20.decimals },
        currency: TRC20.symbol,
        transaction: {
          hash: transfer.txID,
          fee: { value: feeOf(transfer), decimals: TRX_DECIMALS },
          fee_symbol: "TRX",
        },
        filter_id,
        filter_target: { address: bob.base58, direction: "deposit" },
        block: {
          hash: block.blockID,
          number: block.number,
          created_at: new Date(Math.floor(block.header.raw_data.timestamp / 1000) * 1000)
            .toISOString()
            .replace(".000", ""),
        },
        trx_success: true,
      },
    ],
  });
});
