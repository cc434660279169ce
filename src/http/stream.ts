/**
 * Bulk streams for indexers (an extension): POST /node/stream/ext_getBlockReceipts and
 * /node/stream/trace_block with `{fromBlock, toBlock}` answer NDJSON, one line per block in order:
 * `{"number":N,"receipts":[...]}` (or `"traces"`), each equal to the single call's answer for that block.
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
import { createCollector } from "../collector";
import { blockAtTag, type ChainHead } from "../engine/head";
import {
  InternalError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
  UpstreamUnavailableError,
} from "../errors";
import { quantity, toNodeBlockRef } from "../families/evm/blockRef";
import type { RawJson } from "../json";
import type { Logger } from "../log";
import type { Operation } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { BlockRef } from "../schemas";
import { compile } from "../validation";
import { REST } from "./answer";
import { createGather } from "./gather";
import type { Guard, Handler } from "./guard";

export const StreamBody = T.Object({ fromBlock: BlockRef, toBlock: BlockRef });

export interface StreamSpec {
  path: string;
  operation: string;
  /** The member of each line that holds the block's answer. */
  member: string;
  summary: string;
}

export const STREAMS: StreamSpec[] = [
  {
    path: "/node/stream/ext_getBlockReceipts",
    operation: "ext_getBlockReceipts",
    member: "receipts",
    summary: "Receipts of a range of blocks as NDJSON, one line per block in order: {number, receipts}",
  },
  {
    path: "/node/stream/trace_block",
    operation: "trace_block",
    member: "traces",
    summary: "Traces of a range of blocks as NDJSON, one line per block in order: {number, traces}",
  },
];

export function streamRoutes(options: {
  table: OperationTable;
  guard: Guard;
  head: ChainHead;
  maxBlocks: number;
  prefetch: number;
  log: Logger;
}) {
  const { table, guard, head, maxBlocks, prefetch, log } = options;
  const validator = compile<{ fromBlock: unknown; toBlock: unknown }>(StreamBody);

  /** A bound of the range as a block number: tags resolve against the followed head. */
  function bound(value: unknown, field: string): bigint {
    const ref = toNodeBlockRef(value)!;
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
        return BigInt(ref);
    }
  }

  function stream(op: Operation, member: string, from: bigint, to: bigint): ReadableStream<Uint8Array> {
    interface Item {
      number: bigint;
      /** The answer when it was at hand (a cache hit), else the wait for it. */
      raw?: RawJson;
      pending?: Promise<RawJson>;
      error?: unknown;
    }
    let next = from;
    const ahead: Item[] = [];
    /** Starts the calls for the blocks after a miss, up to STREAM_PREFETCH, so they go upstream together. */
    const fill = () => {
      while (ahead.length < prefetch && next <= to) {
        const item: Item = { number: next++ };
        try {
          // Node-form params made here: nothing to validate.
          const run = op.run([quantity(item.number)]);
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
        ahead.push(item);
      }
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
            if (op.readStored?.([quantity(number)], writeLine)) next++;
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
              const e: ServiceError = toServiceError(item.error);
              if (e instanceof InternalError)
                log.error("stream failed", { operation: op.method, error: item.error });
              out.text(`{"number":${item.number},"error":${e.rpcErrorJson()}}\n`);
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

  /** The body's range, checked: at most STREAM_MAX_BLOCKS blocks, tags resolved. */
  function range(body: unknown): { from: bigint; to: bigint } {
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
  }

  const routes: Record<string, { POST: Handler }> = {};
  for (const spec of STREAMS) {
    const op = table.byMethod(spec.operation)!;
    routes[spec.path] = {
      POST: guard.route<{ from: bigint; to: bigint }>({
        name: spec.path,
        transport: REST,
        body: true,
        accept(body) {
          const input = range(body);
          // One token per block: a stream is that many calls.
          return { input, cost: Number(input.to - input.from + 1n) };
        },
        run: ({ from, to }, { requestId }) =>
          new Response(stream(op, spec.member, from, to), {
            headers: { "content-type": "application/x-ndjson", "x-request-id": requestId },
          }),
      }),
    };
  }
  return routes;
}
