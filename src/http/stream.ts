/**
 * Bulk streams for indexers (an extension): POST /node/stream/ext_getBlockReceipts and
 * /node/stream/trace_block with `{fromBlock, toBlock}` answer NDJSON, one line per block in order:
 * `{"number":N,"receipts":[...]}` (or `"traces"`), each equal to the single call's answer for that block.
 *
 * Lines come from the cache where present and from the node otherwise (through the engine, so concurrent
 * blocks go upstream as batches). The reader drives the stream: at most STREAM_PREFETCH blocks are fetched
 * ahead of what it has read, so a slow reader never makes the service hold the whole range.
 *
 * A block that cannot be read once the stream has begun ends it with an error line
 * `{"number":N,"error":{code,message}}` (the status line is already sent).
 */
import { Type as T } from "@sinclair/typebox";
import { quantity, toNodeBlockRef } from "../chain/blockRef";
import { createCollector } from "../collector";
import { blockAtTag, type ChainHead } from "../engine/head";
import {
  InternalError,
  RequestValidationError,
  type ServiceError,
  toServiceError,
  UpstreamUnavailableError,
} from "../errors";
import type { RawJson } from "../json";
import type { Logger } from "../log";
import type { Operation } from "../operations/operation";
import type { OperationTable } from "../operations/table";
import { BlockRef } from "../schemas";
import { compile } from "../validation";
import { REST } from "./answer";
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

const encoder = new TextEncoder();
/** Lines at hand are handed over together, up to this many bytes a pull. */
const PULL_BYTES = 256 * 1024;

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
    const collect = createCollector();
    const fill = () => {
      while (ahead.length < prefetch && next <= to) {
        const item: Item = { number: next++ };
        try {
          const run = op.run(op.prepare([quantity(item.number)]));
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
    const line = (item: Item, raw: RawJson) => {
      const head = encoder.encode(`{"number":${item.number},"${member}":`);
      const body = typeof raw === "string" ? encoder.encode(raw) : raw;
      const out = new Uint8Array(head.length + body.length + 2);
      out.set(head, 0);
      out.set(body, head.length);
      out.set([125, 10], head.length + body.length); // "}\n"
      return out;
    };
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          fill();
          let bytes = 0;
          // Every line already at hand goes in this pull (up to a bound); only an empty pull waits.
          while (ahead.length > 0 && bytes < PULL_BYTES) {
            const item = ahead[0]!;
            if (item.raw === undefined && item.error === undefined) {
              if (bytes > 0) break;
              try {
                item.raw = await item.pending;
              } catch (error) {
                item.error = error;
              }
            }
            ahead.shift();
            if (item.error !== undefined) {
              const e: ServiceError = toServiceError(item.error);
              if (e instanceof InternalError)
                log.error("stream failed", { operation: op.method, error: item.error });
              controller.enqueue(encoder.encode(`{"number":${item.number},"error":${e.rpcErrorJson()}}\n`));
              controller.close();
              ahead.length = 0;
              next = to + 1n;
              return;
            }
            const out = line(item, item.raw!);
            controller.enqueue(out);
            bytes += out.length;
            collect(out.length);
            fill();
          }
          if (ahead.length === 0 && next > to) controller.close();
        },
        cancel() {
          ahead.length = 0;
          next = to + 1n;
        },
      },
      // Little buffered beyond one pull: the rest is fetched (within the prefetch window) as the reader takes it.
      { highWaterMark: 1 },
    );
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
