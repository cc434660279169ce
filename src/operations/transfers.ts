/** Transfer history from the index (docs/interface.md §2, §4.6; the Bitcoin family's §16.5). */
import { Type as T, type TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { AddressCodec } from "../addresses";
import type { ChainInfo } from "../blockchain";
import { readBlockRef } from "../blockRef";
import type { BlockQueries } from "../db/blockQueries";
import { blockAtTag, type ChainFollower } from "../engine/chainFollower";
import { rfc3339 } from "../json";
import { MAX_TRANSFER_LIMIT, TRANSFER_TYPES, Transfer, transferBodies } from "../schemas";
import { TransferKind } from "../transferKind";
import { defineOperation, type Operation, type OperationResult } from "./operation";
import type { TransferQueries, TransferQuery, TransferRecord, TransferShape } from "./transferQueries";

const DEFAULT_LIMIT = 50;
/**
 * A page costs a rate-limit token per this many rows it reads, those `offset` skips included (a page of the
 * largest limit from the start: one token; the deepest offset: 21).
 */
const ROWS_PER_TOKEN = MAX_TRANSFER_LIMIT;
/** PostgreSQL's bigint: block numbers above it select nothing more. */
const MAX_DB_BLOCK = 2n ** 63n - 1n;

/** By the body's `transferType`: a Map, so no name a caller sends reaches what a plain object inherits. */
const KIND = new Map<string, TransferKind>([
  ["trx", TransferKind.trx],
  ["erc20transfer", TransferKind.erc20],
  ["erc721transfer", TransferKind.erc721],
  ["trc10", TransferKind.trc10],
]);
const TYPE_NAME = ["trx", "erc20transfer", "erc721transfer", "trc10"] as const;
/** The interface's types, and a family's own (the TRON family's trc10): a family's shape offers those it holds. */
const EVERY_TYPE_NAME = [...TRANSFER_TYPES, "trc10"] as const;
/** The EVM's rows: every type, the interface's Transfer. */
const EVERY_TYPE: TransferShape = {
  kinds: [TransferKind.trx, TransferKind.erc20, TransferKind.erc721],
  schema: Transfer,
};

interface TransferBody {
  addresses?: string | string[];
  transferDirection?: "from" | "to" | null;
  fromBlock?: number | string | null;
  toBlock?: number | string | null;
  transferType?: string | null;
  contractAddresses?: string | string[] | null;
  offset?: number | null;
  limit?: number | null;
  after?: { blockNumber: number; transactionIndex: number; logIndex: number | null } | null;
}

/** What a page costs, from its params: the rows it reads. */
export function pageCost([body]: unknown[]): number {
  const { offset, limit } = (body ?? {}) as TransferBody;
  return Math.max(1, Math.ceil(((offset ?? 0) + (limit ?? DEFAULT_LIMIT)) / ROWS_PER_TOKEN));
}

const str = JSON.stringify;

export function createTransferOperations(options: {
  transfers: TransferQueries;
  blocks: BlockQueries;
  head: ChainFollower;
  chain: ChainInfo;
  /** The family's addresses: the bodies' are checked against it (the `address` format), looked up canonical. */
  addresses: AddressCodec;
  /** What the family's rows are; unsaid: the EVM's. */
  shape?: TransferShape;
}): Operation[] {
  const { transfers, blocks, head, chain, addresses } = options;
  const shape = options.shape ?? EVERY_TYPE;
  const tokens = shape.kinds.some((k) => k !== TransferKind.trx);
  const what = tokens ? "native and token transfers" : `${chain.nativeSymbol} transfers`;
  // What the index does not hold is refused by the bodies' schemas, naming the chain, not answered `[]`.
  const bodies = transferBodies(
    EVERY_TYPE_NAME.filter((t) => shape.kinds.includes(KIND.get(t)!)),
    chain.blockchain,
    // A cursor's logIndex is what the family's rows answer: null where a row has none.
    Value.Check((shape.schema as TObject).properties.logIndex ?? T.Never(), null),
  );
  const canonicalList = (v: string | string[] | null | undefined) =>
    v === null || v === undefined
      ? undefined
      : (Array.isArray(v) ? v : [v]).map((a) => addresses.canonical(a)!);
  const nativeAsset = str(chain.nativeSymbol);

  /**
   * A block reference of the body, against the index: tags name indexed blocks. `lastIndexed` is read
   * at most once a request, whichever bounds need it.
   */
  async function resolve(
    value: number | string | null | undefined,
    absent: bigint,
    lastIndexed: () => Promise<bigint>,
  ): Promise<bigint> {
    if (value === null || value === undefined) return absent;
    // Against the index, not a node: the request's form is read as it is (blockRef.ts), any family's.
    const ref = readBlockRef(value)!;
    switch (ref) {
      case "earliest":
        return 0n;
      case "latest":
      case "pending":
        return lastIndexed();
      case "safe":
      case "finalized": {
        const last = await lastIndexed();
        const final = blockAtTag(head, ref) ?? -1n;
        return final < last ? final : last;
      }
      default:
        return ref > MAX_DB_BLOCK ? MAX_DB_BLOCK : ref;
    }
  }

  function toJson(r: TransferRecord): string {
    const native = r.kind === TransferKind.trx;
    // A TRC-10 row's decimals are its asset's precision, as a TRC-20's are its token's.
    const decimals = native
      ? chain.nativeDecimals
      : r.kind === TransferKind.erc20 || r.kind === TransferKind.trc10
        ? r.decimals
        : null;
    const fromAddresses = r.fromAddresses === undefined ? "" : `,"fromAddresses":${str(r.fromAddresses)}`;
    // Built as text: value and fee are numeric digits from the database, spliced in exactly.
    return `{"blockNumber":${r.blockNumber},"blockTimestamp":"${rfc3339(BigInt(r.timestamp))}","transactionHash":"${r.transactionHash}","transactionIndex":${r.transactionIndex},"logIndex":${r.logIndex < 0 ? "null" : r.logIndex},"contractAddress":${r.contract === null ? "null" : `"${r.contract}"`},"transferType":"${TYPE_NAME[r.kind]}","from":"${r.from}"${fromAddresses},"to":${r.to === null ? "null" : `"${r.to}"`},"value":${r.value},"fee":${r.fee},"transactionError":${r.error},"asset":${native ? nativeAsset : r.symbol === null ? "null" : str(r.symbol)},"decimals":${decimals ?? "null"}}`;
  }

  async function page(body: TransferBody): Promise<OperationResult> {
    let last: Promise<bigint> | undefined;
    const lastIndexed = () => {
      last ??= blocks.progress().then((p) => (p && p.last >= p.first ? p.last : -1n));
      return last;
    };
    const after = body.after
      ? { ...body.after, blockNumber: BigInt(body.after.blockNumber), logIndex: body.after.logIndex ?? -1 }
      : undefined;
    const fromBlock = await resolve(body.fromBlock, 0n, lastIndexed);
    const query: TransferQuery = {
      addresses: canonicalList(body.addresses),
      direction: body.transferDirection ?? undefined,
      kind: body.transferType ? KIND.get(body.transferType) : undefined,
      contracts: canonicalList(body.contractAddresses),
      fromBlock: after && after.blockNumber > fromBlock ? after.blockNumber : fromBlock,
      toBlock: await resolve(body.toBlock, MAX_DB_BLOCK, lastIndexed),
      after,
      offset: body.offset ?? 0,
      limit: body.limit ?? DEFAULT_LIMIT,
    };
    const rows = await transfers.transfers(query);
    return { raw: `[${rows.map(toJson).join(",")}]` };
  }

  return [
    defineOperation({
      method: "watch_getTransfersByAddress",
      group: "Methods",
      summary: `A page of ${what} from or to the given addresses.`,
      params: [{ name: "query", schema: bodies.byAddress }],
      result: T.Array(shape.schema),
      rest: {
        name: "watch_getTransfersByAddress",
        body: bodies.byAddress,
        toParams: (b) => [b],
        response: T.Array(shape.schema),
      },
      run: (params) => page(params[0] as TransferBody),
      cost: pageCost,
    }),
    defineOperation({
      method: "watch_getTransfers",
      group: "Methods",
      summary: `A page of ${what} of a block range.`,
      params: [{ name: "query", schema: bodies.range, optional: true }],
      result: T.Array(shape.schema),
      rest: {
        name: "watch_getTransfers",
        body: bodies.range,
        toParams: (b) => [b],
        response: T.Array(shape.schema),
      },
      run: (params) => page((params[0] ?? {}) as TransferBody),
      cost: pageCost,
    }),
  ];
}
