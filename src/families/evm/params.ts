/**
 * The params of EVM node methods (their specs `p`, for the rows of methods.ts), and how a valid param is put
 * in the node's form. Lower-case hex makes equal questions look equal (one cache key).
 */
import { Type as T } from "@sinclair/typebox";
import type { ParamSpec } from "../../operations/operation";
import { Address, BlockRef } from "../../schemas";
import { quantity, toNodeBlockRef } from "./blockRef";
import {
  BlockHash,
  BlockSelector,
  Hash32,
  Hydrated,
  Quantity,
  StorageSlot,
  TraceOptions,
  TransactionCall,
  TransactionHash,
} from "./schemas";

const HASH_LENGTH = 66;

export const lower = (v: string) => v.toLowerCase();
export const blockRef = (v: unknown) => toNodeBlockRef(v)!;
const blockRefOrHash = (v: unknown) =>
  typeof v === "string" && v.length === HASH_LENGTH ? v.toLowerCase() : blockRef(v);
export const toQuantity = (v: number | string) => (typeof v === "number" ? quantity(v) : quantity(BigInt(v)));

function blockSelector(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return blockRefOrHash(v);
  const o = v as { blockHash?: string; blockNumber?: unknown; requireCanonical?: boolean };
  if (o.blockHash !== undefined) return { ...o, blockHash: lower(o.blockHash) };
  return { blockNumber: blockRef(o.blockNumber) };
}

export function logFilter(f: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...f };
  if (f.fromBlock !== undefined) out.fromBlock = blockRef(f.fromBlock);
  if (f.toBlock !== undefined) out.toBlock = blockRef(f.toBlock);
  if (typeof f.address === "string") out.address = lower(f.address);
  else if (Array.isArray(f.address)) out.address = f.address.map(lower);
  if (Array.isArray(f.topics)) {
    out.topics = f.topics.map((t) =>
      Array.isArray(t) ? t.map((x) => x?.toLowerCase() ?? null) : (t?.toLowerCase() ?? null),
    );
  }
  if (typeof f.blockHash === "string") out.blockHash = lower(f.blockHash);
  return out;
}

/** trace_filter's filter in the node's form: block numbers as hex quantities, addresses lower-case. */
export function traceFilter(f: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...f };
  if (f.fromBlock !== undefined) out.fromBlock = blockRef(f.fromBlock);
  if (f.toBlock !== undefined) out.toBlock = blockRef(f.toBlock);
  for (const key of ["fromAddress", "toAddress"] as const) {
    if (Array.isArray(f[key])) out[key] = (f[key] as string[]).map(lower);
  }
  return out;
}

const LOG_FILTER_KEYS = ["fromBlock", "toBlock", "address", "topics", "blockHash"] as const;
/** The filter of a REST body: its known keys only, "absent" spelled as a missing key, not null. */
export function restLogFilter(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of LOG_FILTER_KEYS) if (body[key] !== null && body[key] !== undefined) out[key] = body[key];
  return out;
}

/** The params node methods share. */
export const p = {
  block: { name: "block", schema: BlockRef, normalize: blockRef },
  blockOrHash: {
    name: "block",
    schema: T.Union([...BlockRef.anyOf, Hash32], { description: `${BlockRef.description}, or a block hash` }),
    normalize: blockRefOrHash,
  },
  blockHash: { name: "block hash", schema: BlockHash, normalize: lower },
  txHash: { name: "transaction hash", schema: TransactionHash, normalize: lower },
  hydrated: { name: "hydrated", schema: Hydrated },
  index: { name: "transaction index", schema: Quantity, normalize: toQuantity },
  address: { name: "address", schema: Address, normalize: lower },
  selector: { name: "block", schema: BlockSelector, normalize: blockSelector },
  optionalSelector: { name: "block", schema: BlockSelector, normalize: blockSelector, optional: true },
  call: { name: "transaction", schema: TransactionCall },
  stateOverrides: { name: "state overrides", schema: T.Record(T.String(), T.Unknown()), optional: true },
  blockOverrides: { name: "block overrides", schema: T.Record(T.String(), T.Unknown()), optional: true },
  storageKeys: {
    name: "storage keys",
    schema: T.Array(StorageSlot),
    normalize: (keys: string[]) => keys.map(lower),
  },
  traceOptions: { name: "tracer options", schema: TraceOptions, optional: true },
} satisfies Record<string, ParamSpec>;
