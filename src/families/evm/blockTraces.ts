/**
 * A block's traces for watch filters' check_v2 (docs/architecture.md §5): Parity's `trace_block`, or where
 * no upstream has it, geth's `debug_traceBlockByNumber` with the call tracer. Both calls go through the
 * engine, so they are cached and coalesced like any other.
 */
import { callText, type Engine } from "../../engine/engineApi";
import { NodeError } from "../../errors";

/**
 * A block's traces in the form an upstream could give: Parity's `trace_block` where one has it, else
 * geth's `debug_traceBlockByNumber` with the call tracer (a tree per transaction, in the order of the
 * block's `transactions`). `traces` is the JSON text, `null` for a block the node does not have.
 */
export type BlockTraces =
  | { format: "parity"; traces: string }
  | { format: "callTracer"; traces: string; transactions: string[] };

/** The traces of the block at a node-form number. */
export async function blockTraces(engine: Engine, block: string): Promise<BlockTraces> {
  try {
    return { format: "parity", traces: await callText(engine, "trace_block", [block]) };
  } catch (error) {
    if (!(error instanceof NodeError && error.kind === "method_unsupported")) throw error;
  }
  const [traces, header] = await Promise.all([
    callText(engine, "debug_traceBlockByNumber", [block, { tracer: "callTracer" }]),
    callText(engine, "eth_getBlockByNumber", [block, false]),
  ]);
  const transactions =
    header === "null" ? [] : (JSON.parse(header) as { transactions: string[] }).transactions;
  return { format: "callTracer", traces, transactions };
}
