/**
 * Bulk streams for indexers (an extension): the family's streams (EVM: POST /node/stream/ext_getBlockReceipts
 * and /node/stream/trace_block, families/evm/methods.ts) with `{fromBlock, toBlock}` answer NDJSON, one line
 * per block in order: `{"number":N,"receipts":[...]}` (the stream's member), each equal to the single call's
 * answer for that block.
 *
 * A final block the cache holds is written as stored, copied once from the memory tier or the disk tier's
 * read buffer, without making it recent in memory (a range read once must not push out what bots read
 * often). Other blocks go through the engine, so concurrent blocks go upstream as batches: after a miss the
 * next STREAM_PREFETCH blocks are asked together. The reader drives the stream: nothing is read or fetched
 * beyond that window while the response's buffer is full, so a slow reader never makes the service hold
 * the whole range.
 *
 * A block that cannot be read once the stream has begun ends it with an error line
 * `{"number":N,"error":{code,message}}` (the status line is already sent).
 */
import { Type as T } from "@sinclair/typebox";
import type { BlockRefs } from "../blockRef";
import { createCollector } from "../collector";
import { blockAtTag, type ChainFollower } from "../engine/chainFollower";
import {
  InternalError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
  UpstreamUnavailableError,
} from "../errors";
import type { RawJson } from "../json";
import type { Logger } from "../log";
import type { Operation, StreamSpec } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { BlockRef } from "../schemas";
import { compile } from "../validation";
import { REST } from "./answer";
import { createGather, type Gather } from "./gather";
import type { Guard, Handler } from "./guard";

export const StreamBody = T.Object({ fromBlock: BlockRef, toBlock: BlockRef });

interface BlockRange {
  from: bigint;
  to: bigint;
}

/** A block of the stream: its answer when it was at hand (a cache hit), else the wait for it. */
interface Item {
  number: bigint;
  raw?: RawJson;
  pending?: Promise<RawJson>;
  error?: unknown;
}

/** What a stream is made with, besides its operation and range. */
interface StreamContext {
  blockRefs: BlockRefs;
  prefetch: number;
  log: Logger;
}

/** POST <spec.path> for each of the family's streams (families/evm/methods.ts for EVM). */
export function streamRoutes(options: {
  table: OperationTable;
  guard: Guard;
  head: ChainFollower;
  /** The family's streams, each naming an operation of the table. */
  streams: readonly StreamSpec[];
  /** How the family's nodes write block numbers (the blocks of a range are asked in that form). */
  blockRefs: BlockRefs;
  maxBlocks: number;
  prefetch: number;
  log: Logger;
}): Record<string, { POST: Handler }> {
  const { table, guard, streams, blockRefs, prefetch, log } = options;
  const readRange = createRangeReader(options);
  const context: StreamContext = { blockRefs, prefetch, log };
  const routes: Record<string, { POST: Handler }> = {};
  for (const spec of streams) {
    const op = table.byMethod(spec.operation)!;
    routes[spec.path] = {
      POST: guard.route<BlockRange>({
        name: spec.path,
        transport: REST,
        body: true,
        accept(body) {
          const input = readRange(body);
          // One token per block: a stream is that many calls.
          return { input, cost: Number(input.to - input.from + 1n) };
        },
        run: (range, { requestId }) =>
          new Response(blockStream(op, spec.member, range, context), {
            headers: { "content-type": "application/x-ndjson", "x-request-id": requestId },
          }),
      }),
    };
  }
  return routes;
}

/** Reads a body's range, checked: at most STREAM_MAX_BLOCKS blocks, tags resolved. */
function createRangeReader(options: {
  head: ChainFollower;
  blockRefs: BlockRefs;
  maxBlocks: number;
}): (body: unknown) => BlockRange {
  const { head, blockRefs, maxBlocks } = options;
  const validator = compile<{ fromBlock: unknown; toBlock: unknown }>(StreamBody);

  /** A bound of the range as a block number: tags resolve against the followed head. */
  function bound(value: unknown, field: string): bigint {
    const ref = blockRefs.normalize(value)!;
    switch (ref) {
      case "pending":
        throw new RequestValidationError([
          { loc: ["body", field], msg: "pending is not a block a range can name", type: "value_error" },
        ]);
      case "earliest":
        return 0n;
      case "latest":
      case "safe":
      case "finalized": {
        const n = blockAtTag(head, ref);
        if (n === undefined)
          throw new UpstreamUnavailableError(`the chain's ${ref} block is not known yet; retry`);
        return n;
      }
      default:
        return blockRefs.numberOf(ref)!;
    }
  }

  return (body) => {
    if (!validator.check(body)) throw new RequestValidationError(validator.issues(body, ["body"]));
    const from = bound(body.fromBlock, "fromBlock");
    const to = bound(body.toBlock, "toBlock");
    if (to < from) {
      throw new RequestValidationError([
        { loc: ["body", "toBlock"], msg: "toBlock should be at or after fromBlock", type: "value_error" },
      ]);
    }
    const count = to - from + 1n;
    if (count > BigInt(maxBlocks)) {
      throw new RequestValidationError([
        {
          loc: ["body", "toBlock"],
          msg: `the range holds ${count} blocks; at most ${maxBlocks} (STREAM_MAX_BLOCKS) a request`,
          type: "value_error",
        },
      ]);
    }
    return { from, to };
  };
}

/** Starts the operation's call for one block (node-form params made here: nothing to validate). */
function startCall(op: Operation, number: bigint, blockRefs: BlockRefs): Item {
  const item: Item = { number };
  try {
    const run = op.run([blockRefs.encode(number)]);
    if (run instanceof Promise) {
      item.pending = run.then((r) => r.raw);
      // Errors are reported in order, when the reader gets to them.
      item.pending.catch(() => {});
    } else {
      item.raw = run.raw;
    }
  } catch (error) {
    item.error = error;
  }
  return item;
}

/** The error line that ends a stream (the status line is already sent). */
function writeError(out: Gather, item: Item, op: Operation, log: Logger): void {
  const e: ServiceError = toServiceError(item.error);
  if (e instanceof InternalError) log.error("stream failed", { operation: op.method, error: item.error });
  out.text(`{"number":${item.number},"error":${e.rpcErrorJson()}}\n`);
}

/** The NDJSON lines of a range, read as the reader takes them. */
function blockStream(
  op: Operation,
  member: string,
  range: BlockRange,
  context: StreamContext,
): ReadableStream<Uint8Array> {
  const { blockRefs, prefetch } = context;
  const { to } = range;
  let next = range.from;
  const ahead: Item[] = [];
  /** Starts the calls for the blocks after a miss, up to STREAM_PREFETCH, so they go upstream together. */
  const fill = () => {
    while (ahead.length < prefetch && next <= to) ahead.push(startCall(op, next++, blockRefs));
  };
  const stop = () => {
    ahead.length = 0;
    next = to + 1n;
  };
  // A direct stream, written through a gather (http/gather.ts): cached bytes are copied once, from where
  // they are read; a write that fills the response's buffer makes the loop wait for the reader.
  return new ReadableStream({
    type: "direct",
    async pull(controller) {
      const out = createGather(controller);
      // Answers read through the engine leave garbage behind (copies, decoded text), those read as stored
      // none: only the first count towards a collection (collector.ts).
      const collect = createCollector();
      let number = 0n;
      const writeLine = (raw: RawJson) => {
        out.ascii(`{"number":${number},"${member}":`);
        out.raw(raw);
        out.ascii("}\n");
      };
      while (next <= to || ahead.length > 0) {
        if (ahead.length === 0) {
          number = next;
          // A final answer kept is written from the cache as stored.
          if (op.readStored?.([blockRefs.encode(number)], writeLine)) next++;
          else fill();
        }
        if (ahead.length > 0) {
          const item = ahead.shift()!;
          if (item.pending) {
            // A miss: what is gathered goes out while it is fetched, and the calls after it are kept
            // STREAM_PREFETCH ahead. Past a run of hits the window drains and reads go back to the cache.
            fill();
            out.flush();
            try {
              item.raw = await item.pending;
            } catch (error) {
              item.error = error;
            }
          }
          if (item.error !== undefined) {
            writeError(out, item, op, context.log);
            stop();
            break;
          }
          number = item.number;
          writeLine(item.raw!);
          collect(item.raw!.length);
        }
        const drained = out.drained();
        if (drained !== true && !(await drained)) return stop();
      }
      out.flush();
      await controller.end();
    },
    cancel: stop,
  });
}
