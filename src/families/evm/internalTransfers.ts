/**
 * Native value moved inside contract execution, read from a block's traces: calls that carry value,
 * contracts created with value, and self-destructs that send a balance on. A frame that failed, or sits
 * under one that failed (the whole transaction included), moved nothing. DELEGATECALL, STATICCALL and
 * CALLCODE move nothing between accounts.
 *
 * Two trace forms: Parity/OpenEthereum `trace_block` (a flat list in execution order with trace
 * addresses), and Geth's `debug_traceBlockByNumber` with the call tracer (a tree per transaction).
 */

export interface InternalTransfer {
  transactionIndex: number;
  transactionHash: string;
  /** The frame's place among the transaction's internal transfers, in execution order. */
  order: number;
  from: string;
  to: string;
  value: bigint;
}

export interface ParityTrace {
  type: string;
  action: {
    callType?: string;
    from?: string;
    to?: string;
    value?: string;
    address?: string;
    refundAddress?: string;
    balance?: string;
  };
  result?: { address?: string } | null;
  error?: string;
  traceAddress: number[];
  transactionHash?: string | null;
  transactionPosition?: number | null;
}

const amount = (hex: string | undefined) => (hex ? BigInt(hex) : 0n);
const lower = (address: string | undefined) => address?.toLowerCase();

/** From `trace_block`. */
export function internalTransfersOfParity(traces: ParityTrace[]): InternalTransfer[] {
  const out: InternalTransfer[] = [];
  // Failed frames, as "transaction:trace address", so their descendants are skipped too.
  const failed = new Set<string>();
  const order = new Map<number, number>();
  for (const trace of traces) {
    const position = trace.transactionPosition;
    if (position === null || position === undefined || !trace.transactionHash) continue;
    const path = trace.traceAddress;
    const id = `${position}:${path.join(",")}`;
    if (trace.error !== undefined && trace.error !== null) {
      failed.add(id);
      continue;
    }
    let underFailure = false;
    for (let depth = 0; depth < path.length && !underFailure; depth++) {
      underFailure = failed.has(`${position}:${path.slice(0, depth).join(",")}`);
    }
    if (underFailure || path.length === 0) continue;
    const { action } = trace;
    let from: string | undefined;
    let to: string | undefined;
    let value = 0n;
    if (trace.type === "call" && action.callType === "call") {
      [from, to, value] = [lower(action.from), lower(action.to), amount(action.value)];
    } else if (trace.type === "create") {
      [from, to, value] = [lower(action.from), lower(trace.result?.address), amount(action.value)];
    } else if (trace.type === "suicide") {
      [from, to, value] = [lower(action.address), lower(action.refundAddress), amount(action.balance)];
    }
    if (!from || !to || value === 0n) continue;
    const n = order.get(position) ?? 0;
    order.set(position, n + 1);
    out.push({
      transactionIndex: position,
      transactionHash: trace.transactionHash.toLowerCase(),
      order: n,
      from,
      to,
      value,
    });
  }
  return out;
}

export interface CallFrame {
  type: string;
  from?: string;
  to?: string;
  value?: string;
  error?: string;
  calls?: CallFrame[];
}

/** A transaction's call tree; older Geth versions write no txHash. */
export interface CallTrace {
  txHash?: string;
  result: CallFrame;
}

/** From `debug_traceBlockByNumber` with `{tracer: "callTracer"}`: one `{txHash, result}` per transaction. */
export function internalTransfersOfCallTraces(
  traces: CallTrace[],
  transactionHashes: string[],
): InternalTransfer[] {
  const out: InternalTransfer[] = [];
  traces.forEach((trace, index) => {
    const transactionHash = (trace.txHash ?? transactionHashes[index])?.toLowerCase();
    if (!transactionHash) return;
    let order = 0;
    const walk = (frame: CallFrame, depth: number) => {
      if (frame.error) return;
      const type = frame.type.toUpperCase();
      const value = amount(frame.value);
      const moves = type === "CALL" || type === "CREATE" || type === "CREATE2" || type === "SELFDESTRUCT";
      if (depth > 0 && moves && value > 0n && frame.from && frame.to) {
        out.push({
          transactionIndex: index,
          transactionHash,
          order: order++,
          from: frame.from.toLowerCase(),
          to: frame.to.toLowerCase(),
          value,
        });
      }
      for (const call of frame.calls ?? []) walk(call, depth + 1);
    };
    walk(trace.result, 0);
  });
  return out;
}
