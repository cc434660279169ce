/**
 * The TRON family's TronGrid v1 API source (operations/tronGridSource.ts): pages chosen from the index
 * (tronGridQueries.ts; sql/tron/012's orders), rows read where they are whole:
 *  - an account's transactions: the node's transaction (`gettransactionbyid`) and its info
 *    (`gettransactioninfobyid`), both kept by the cache once solidified, written as TronGrid writes them;
 *  - TRC-20 rows: the index alone (transfers, approvals, token metadata);
 *  - events: decoded from the node's transaction infos (events.ts), the transaction's own
 *    (`gettransactioninfobyid`), the block's (`gettransactioninfobyblocknum`, the index's own read) or, for a
 *    contract's, those of the page's transactions, the index naming which events are on the page.
 * Node reads are charged before they are made (ChargeReads), READS_AT_ONCE at a time.
 */
import { callText, type Engine } from "../../../engine/engineApi";
import { BadRequestError } from "../../../errors";
import { objectMembers } from "../../../json";
import type {
  TronGridDeps,
  TronGridPage,
  TronGridRange,
  TronGridSource,
} from "../../../operations/tronGridSource";
import { tronAddresses } from "../addresses";
import { readExact } from "../decode";
import { isNodeRefusal, pathMethod } from "../httpApi";
import { decodeEvents, type EventPlace, eventJson, type LogJson } from "./events";
import { readFingerprint, writeFingerprint } from "./fingerprint";
import { type BlockBounds, createTronGridQueries } from "./tronGridQueries";

/** Node reads running at once for one page. */
const READS_AT_ONCE = 16;
/** A block's infos cost a token more for each this many transactions (their size grows with them). */
const TRANSACTIONS_PER_TOKEN = 100;
const LAST_BLOCK = (1n << 62n) - 1n;

interface InfoJson {
  id?: string;
  blockNumber?: number | string;
  blockTimeStamp?: number | string;
  contract_address?: string;
  log?: LogJson[];
  internal_transactions?: {
    hash?: string;
    caller_address?: string;
    transferTo_address?: string;
    callValueInfo?: { callValue?: number | string; tokenId?: string }[];
    note?: string;
    rejected?: boolean;
  }[];
}

const hex41 = (base58: string) => Buffer.from(tronAddresses.toBytes(base58)).toString("hex");
const base58 = (hex: string) => tronAddresses.fromBytes(Buffer.from(hex, "hex"));

/** `f` over `items`, READS_AT_ONCE at a time, in order. */
async function mapLimited<T, R>(items: readonly T[], f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += READS_AT_ONCE) {
    out.push(...(await Promise.all(items.slice(i, i + READS_AT_ONCE).map(f))));
  }
  return out;
}

/** A member's JSON text (`fallback` where absent). */
function memberText(
  text: string,
  members: Map<string, { start: number; end: number }>,
  name: string,
  fallback = "0",
) {
  const span = members.get(name);
  return span ? text.slice(span.start, span.end) : fallback;
}

/** A TransferAssetContract's `asset_name`: the node writes the id's text in hex, TronGrid the text. */
const assetNamesAsText = (rawData: string) =>
  rawData.replace(
    /"asset_name"\s*:\s*"((?:3[0-9]){1,20})"/g,
    (_m, h: string) => `"asset_name":"${Buffer.from(h, "hex").toString()}"`,
  );

/** An info's internal transactions as TronGrid lists them beside a transaction. */
function internalTransactions(info: InfoJson, txid: string, timestamp: string): string {
  const rows = (info.internal_transactions ?? []).map((t) => {
    const callValue: Record<string, string> = {};
    for (const v of t.callValueInfo ?? []) callValue[v.tokenId ?? "_"] = String(v.callValue ?? 0);
    const values = Object.entries(callValue).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
    return `{"internal_tx_id":${JSON.stringify(t.hash ?? "")},"data":{"note":${JSON.stringify(t.note ?? "")},"rejected":${t.rejected === true},"call_value":{${values.join(",")}}},"block_timestamp":${timestamp},"to_address":${JSON.stringify(t.transferTo_address ?? "")},"tx_id":"${txid}","from_address":${JSON.stringify(t.caller_address ?? "")}}`;
  });
  return `[${rows.join(",")}]`;
}

/**
 * A transaction as TronGrid's account listing writes it: the node's transaction (ret with the fee, the
 * signatures, txID, raw_data, raw_data_hex) with its info's figures; the node's texts spliced, so every
 * amount stays the node's digits. Undefined where the node no longer has it (a reorg since the page was read).
 */
async function transactionRow(engine: Engine, txid: string): Promise<string | undefined> {
  const [tx, info] = await Promise.all([
    callText(engine, pathMethod("wallet", "gettransactionbyid"), [{ value: txid }]),
    callText(engine, pathMethod("wallet", "gettransactioninfobyid"), [{ value: txid }]),
  ]);
  if (isNodeRefusal(tx) || isNodeRefusal(info)) return undefined;
  const t = objectMembers(tx, 0);
  const i = objectMembers(info, 0);
  const receiptSpan = i.get("receipt");
  const receipt = receiptSpan ? objectMembers(info, receiptSpan.start) : new Map();
  const r = (name: string) => memberText(info, receipt, name);
  const fee = memberText(info, i, "fee");
  const ret = memberText(tx, t, "ret", "[]")
    .replace(/^\s*\[\s*\{/, `[{"fee":${fee},`)
    .replace(/,\s*}/, "}");
  const timestamp = memberText(info, i, "blockTimeStamp");
  return `{"ret":${ret},"signature":${memberText(tx, t, "signature", "[]")},"txID":"${txid}","net_usage":${r("net_usage")},"raw_data_hex":${memberText(tx, t, "raw_data_hex", '""')},"net_fee":${r("net_fee")},"energy_usage":${r("energy_usage")},"blockNumber":${memberText(info, i, "blockNumber")},"block_timestamp":${timestamp},"energy_fee":${r("energy_fee")},"energy_usage_total":${r("energy_usage_total")},"raw_data":${assetNamesAsText(memberText(tx, t, "raw_data", "{}"))},"internal_transactions":${internalTransactions(readExact<InfoJson>(info), txid, timestamp)}}`;
}

/** Where an info's events happened. */
const placeOf = (info: InfoJson, txid: string): EventPlace => ({
  blockNumber: BigInt(info.blockNumber ?? 0),
  blockTimestamp: BigInt(info.blockTimeStamp ?? 0),
  caller: info.contract_address?.toLowerCase(),
  transactionId: txid,
});

export function createTronGrid(deps: TronGridDeps): TronGridSource {
  const { engine, finalized } = deps;
  const queries = deps.guard(createTronGridQueries(deps.sql));
  const info = async (txid: string): Promise<InfoJson | undefined> => {
    const text = await callText(engine, pathMethod("wallet", "gettransactioninfobyid"), [{ value: txid }]);
    return isNodeRefusal(text) ? undefined : readExact<InfoJson>(text);
  };
  /** Whether block `n` is of the confirmation asked. */
  const confirmationHolds = (n: bigint, confirmation: TronGridRange["confirmation"]) => {
    const f = finalized() ?? -1n;
    return confirmation === "any" || (confirmation === "confirmed" ? n <= f : n > f);
  };

  async function bounds(range: TronGridRange): Promise<BlockBounds | undefined> {
    const f = finalized() ?? -1n;
    const lo = range.confirmation === "unconfirmed" ? f + 1n : 0n;
    const hi = range.confirmation === "confirmed" ? f : LAST_BLOCK;
    if (hi < lo) return undefined;
    return queries.bounds(lo, hi, range.minTimestamp, range.maxTimestamp);
  }

  /** One page of `rows` read with `limit + 1`: the fingerprint of its last where one more was there. */
  function paged<K>(keys: K[], limit: number, kind: string, position: (key: K) => (bigint | number)[]) {
    const page = keys.slice(0, limit);
    const last = page[page.length - 1];
    return {
      page,
      fingerprint: keys.length > limit && last ? writeFingerprint(kind, position(last)) : undefined,
    };
  }

  const after = (kind: string, range: TronGridRange) =>
    range.fingerprint === undefined
      ? undefined
      : (readFingerprint(kind, range.fingerprint, 2) as [bigint, bigint]);

  return {
    async account(address, confirmed) {
      const face = confirmed ? "walletsolidity" : "wallet";
      const text = await callText(engine, pathMethod(face, "getaccount"), [{ address: hex41(address) }]);
      if (!isNodeRefusal(text)) return text;
      const error = readExact<{ Error?: string }>(text).Error;
      if (error !== undefined) throw new BadRequestError(error);
      return undefined;
    },

    async accountTransactions(q, charge): Promise<TronGridPage> {
      const position = after("tx", q);
      const b = await bounds(q);
      if (!b) return { rows: [] };
      const keys = await queries.accountTransactions(hex41(q.address), q.side, q.searchInternal, b, {
        order: q.order,
        limit: q.limit + 1,
        after: position,
      });
      const { page, fingerprint } = paged(keys, q.limit, "tx", (k) => [
        BigInt(k.block_number),
        k.transaction_index,
      ]);
      await charge(2 * page.length);
      const rows = await mapLimited(page, (k) => transactionRow(engine, k.hash));
      return { rows: rows.filter((r): r is string => r !== undefined), fingerprint };
    },

    async trc20Transfers(q): Promise<TronGridPage> {
      const position = after("trc20", q);
      const b = await bounds(q);
      if (!b) return { rows: [] };
      const keys = await queries.trc20(
        hex41(q.address),
        q.side,
        q.contract === undefined ? undefined : hex41(q.contract),
        b,
        { order: q.order, limit: q.limit + 1, after: position },
      );
      const { page, fingerprint } = paged(keys, q.limit, "trc20", (k) => [
        BigInt(k.block_number),
        k.log_index,
      ]);
      const rows = page.map((r) =>
        JSON.stringify({
          transaction_id: r.txid,
          token_info: { symbol: r.symbol, address: base58(r.contract), decimals: r.decimals, name: r.name },
          block_timestamp: Number(r.timestamp_ms),
          from: base58(r.from),
          to: base58(r.to),
          type: r.kind === 0 ? "Transfer" : "Approval",
          value: r.value,
        }),
      );
      return { rows, fingerprint };
    },

    async contractEvents(q, charge): Promise<TronGridPage> {
      const position = after("event", q);
      const b = await bounds(q);
      if (!b) return { rows: [] };
      const keys = await queries.contractEvents(hex41(q.contract), q.eventName, q.blockNumber, b, {
        order: q.order,
        limit: q.limit + 1,
        after: position,
      });
      const { page, fingerprint } = paged(keys, q.limit, "event", (k) => [
        BigInt(k.block_number),
        k.log_index,
      ]);
      if (page.length === 0) return { rows: [] };
      const transactions = await queries.eventTransactions(page);
      await charge(transactions.length);
      const infos = await mapLimited(transactions, (t) => info(t.hash));
      // Each transaction's events, by their block-wide log position: the index numbers a block's logs in
      // order, so its first kept log's position less that log's place in the transaction is where the
      // transaction's logs begin.
      const byPosition = new Map<string, string>();
      transactions.forEach((t, i) => {
        const found = infos[i];
        if (!found || t.first_indexed === null) return;
        const events = decodeEvents(found.log);
        const first = events.find((e) => e.indexed);
        if (!first) return;
        const start = t.first_indexed - first.eventIndex;
        const place = placeOf(found, t.hash);
        for (const e of events)
          byPosition.set(`${t.block_number}:${start + e.eventIndex}`, eventJson(e, place));
      });
      const rows = page.map((k) => byPosition.get(`${k.block_number}:${k.log_index}`));
      return { rows: rows.filter((r): r is string => r !== undefined), fingerprint };
    },

    async transactionEvents(txid, confirmation): Promise<TronGridPage> {
      const found = await info(txid);
      if (!found || !confirmationHolds(BigInt(found.blockNumber ?? 0), confirmation)) return { rows: [] };
      const place = placeOf(found, txid);
      return { rows: decodeEvents(found.log).map((e) => eventJson(e, place)) };
    },

    async blockEvents(which, page, charge): Promise<TronGridPage | undefined> {
      const block = await queries.block(which);
      if (!block) return undefined;
      const n = BigInt(block.number);
      const start = page.fingerprint === undefined ? -1n : readFingerprint("block", page.fingerprint, 2);
      if (Array.isArray(start) && start[0] !== n) throw new BadRequestError("Invalid fingerprint.");
      if (!confirmationHolds(n, page.confirmation) || block.transaction_count === 0) return { rows: [] };
      await charge(Math.ceil(block.transaction_count / TRANSACTIONS_PER_TOKEN));
      // The index's own read of the block: a cache hit once solidified.
      const text = await callText(engine, pathMethod("wallet", "gettransactioninfobyblocknum"), [
        { num: Number(n) },
      ]);
      const infos = isNodeRefusal(text) ? [] : readExact<InfoJson[]>(text);
      const from = Array.isArray(start) ? start[1]! : -1n;
      // The events after the fingerprint's, one more than the page: the block's logs numbered in order.
      const events: { at: bigint; json: () => string }[] = [];
      let position = 0n;
      for (const found of infos) {
        const place = placeOf(found, (found.id ?? "").toLowerCase());
        for (const e of decodeEvents(found.log)) {
          const at = position + BigInt(e.eventIndex);
          if (at > from && events.length <= page.limit) events.push({ at, json: () => eventJson(e, place) });
        }
        if (events.length > page.limit) break;
        position += BigInt(found.log?.length ?? 0);
      }
      const { page: rows, fingerprint } = paged(events, page.limit, "block", (e) => [n, e.at]);
      return { rows: rows.map((e) => e.json()), fingerprint };
    },
  };
}
