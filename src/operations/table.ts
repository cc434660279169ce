/** The operation table: every method the service answers, looked up by JSON-RPC name or REST route. */
import type { Operation } from "./operation";

export interface OperationTable {
  readonly list: readonly Operation[];
  byMethod(method: string): Operation | undefined;
  byRestName(name: string): Operation | undefined;
}

export function createOperationTable(operations: Operation[]): OperationTable {
  const byMethod = new Map<string, Operation>();
  const byRest = new Map<string, Operation>();
  for (const op of operations) {
    if (byMethod.has(op.method)) throw new Error(`operation ${op.method} defined twice`);
    byMethod.set(op.method, op);
    if (op.rest) {
      if (byRest.has(op.rest.name)) throw new Error(`REST route ${op.rest.name} defined twice`);
      byRest.set(op.rest.name, op);
    }
  }
  return {
    list: operations,
    byMethod: (method) => byMethod.get(method),
    byRestName: (name) => byRest.get(name),
  };
}
