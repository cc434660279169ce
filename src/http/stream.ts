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
import type { ChainHead } from "../chain/head";
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
import { BlockRef } from "../operations/schemas";
import type { OperationTable } from "../operations/table";
import { compile } from "../validation";
import type { Edge, Handler } from "./edge";
import { jsonHeaders, parseBody, restError } from "./respond";

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

export function streamRoutes(options: {
  table: OperationTable;
  edge: Edge;
  head: ChainHead;
  maxBlocks: number;
  prefetch: number;
  log: Logger;
}) {
  const { table, edge, head, maxBlocks, prefetch, log } = options;
  const validator = compile<{ fromBlock: unknown; toBlock: unknown }>(StreamBody);

  /** A bound of the range as a block number: tags resolve against the followed head. */
  function bound(value: unknown, field: string): bigint {
    const ref = toNodeBlockRef(value)!;
    let n: bigint | undefined;
    switch (ref) {
      case "pending":
        throw new RequestValidationError([
          { loc: ["body", field], msg: "pending is not a block a range can name", type: "value_error" },
        ]);
      case "earliest":
        return 0n;
      case "latest":
        n = head.latest();
        break;
      case "safe":
        n = head.safe();
        break;
      case "finalized":
        n = head.finalized();
        break;
      default:
        return BigInt(ref);
    }
    if (n === undefined)
      throw new UpstreamUnavailableError(`the chain's ${ref} block is not known yet; retry`);
    return n;
  }

  function stream(op: Operation, member: string, from: bigint, to: bigint): ReadableStream<Uint8Array> {
    let next = from;
    const ahead: { number: bigint; answer: Promise<RawJson> }[] = [];
    const fill = () => {
      while (ahead.length < prefetch && next <= to) {
        const number = next++;
        const answer = (async () => (await op.run(op.prepare([quantity(number)]))).raw)();
        // Errors are reported in order, when the reader gets to them.
        answer.catch(() => {});
        ahead.push({ number, answer });
      }
    };
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          fill();
          const item = ahead.shift();
          if (!item) {
            controller.close();
            return;
          }
          try {
            const raw = await item.answer;
            const head = encoder.encode(`{"number":${item.number},"${member}":`);
            const body = typeof raw === "string" ? encoder.encode(raw) : raw;
            const line = new Uint8Array(head.length + body.length + 2);
            line.set(head, 0);
            line.set(body, head.length);
            line.set([125, 10], head.length + body.length); // "}\n"
            controller.enqueue(line);
            fill();
            if (ahead.length === 0 && next > to) controller.close();
          } catch (error) {
            const e: ServiceError = toServiceError(error);
            if (e instanceof InternalError) log.error("stream failed", { operation: op.method, error });
            controller.enqueue(encoder.encode(`{"number":${item.number},"error":${e.rpcErrorJson()}}\n`));
            controller.close();
            ahead.length = 0;
          }
        },
        cancel() {
          ahead.length = 0;
          next = to + 1n;
        },
      },
      // One line buffered: the next is fetched (within the prefetch window) as the reader takes this one.
      { highWaterMark: 1 },
    );
  }

  const routes: Record<string, { POST: Handler }> = {};
  for (const spec of STREAMS) {
    const op = table.byMethod(spec.operation)!;
    routes[spec.path] = {
      POST: edge.route(spec.path, async (request, server, requestId) => {
        try {
          const text = await edge.readBody(request);
          const caller = await edge.authenticate(request);
          const body = parseBody(text);
          if (!validator.check(body)) throw new RequestValidationError(validator.issues(body, ["body"]));
          const from = bound(body.fromBlock, "fromBlock");
          const to = bound(body.toBlock, "toBlock");
          if (to < from) {
            throw new RequestValidationError([
              {
                loc: ["body", "toBlock"],
                msg: "toBlock should be at or after fromBlock",
                type: "value_error",
              },
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
          // One token per block: a stream is that many calls.
          edge.charge(caller, request, server, Number(count));
          return new Response(stream(op, spec.member, from, to), {
            headers: { "content-type": "application/x-ndjson", "x-request-id": requestId },
          });
        } catch (error) {
          const e = toServiceError(error);
          if (e instanceof InternalError)
            log.error("stream route failed", { route: spec.path, requestId, error });
          return restError(e, jsonHeaders(requestId));
        }
      }),
    };
  }
  return routes;
}
