import { expect, test } from "bun:test";
import { evmDayStats } from "../families/evm/dayStats";
import { createNodeOperations } from "../families/evm/methods";
import { createTokenOperations } from "../families/evm/tokens";
import { createStatsOperations } from "./stats";
import { createOperationTable } from "./table";
import { createTransferOperations } from "./transfers";

// The interface's methods and REST routes (docs/interface.md §2).
const METHODS = [
  "net_version",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_blockNumber",
  "trace_block",
  "trace_transaction",
  "ext_getBlockReceipts",
  "eth_getTransactionReceipt",
  "eth_getTransactionByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getBlockTransactionCountByHash",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getUncleCountByBlockNumber",
  "eth_getUncleCountByBlockHash",
  "watch_getTransfersByAddress",
  "watch_getTransfers",
  "eth_getLogs",
  "watch_getTokenBalances",
  "watch_getStatsByDay",
  "watch_getBlockNumberByTimestamp",
  "watch_getTokenMetadata",
  "watch_getBlockNumbersByDay",
];
const NODE_METHODS = [
  "eth_call",
  "eth_chainId",
  "eth_estimateGas",
  "eth_gasPrice",
  "eth_getBalance",
  "eth_getCode",
  "eth_getStorageAt",
  "eth_sendRawTransaction",
  "eth_getTransactionCount",
  "eth_feeHistory",
  "web3_clientVersion",
  "net_listening",
  "net_peerCount",
  "eth_syncing",
  "eth_protocolVersion",
  "eth_maxPriorityFeePerGas",
  "eth_blobBaseFee",
  "eth_getBlockReceipts",
  "eth_getProof",
  "eth_createAccessList",
  "eth_getTransactionBySenderAndNonce",
  "eth_simulateV1",
  "eth_getUncleByBlockNumberAndIndex",
  "eth_getUncleByBlockHashAndIndex",
  "eth_accounts",
  "debug_traceTransaction",
  "debug_traceBlockByNumber",
  "debug_traceBlockByHash",
  "debug_traceCall",
  "trace_filter",
  "trace_replayTransaction",
  "trace_replayBlockTransactions",
];
const REST = [
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_blockNumber",
  "watch_getBlockNumberByTimestamp",
  "net_version",
  "watch_getStatsByDay",
  "watch_getBlockNumbersByDay",
  "eth_getLogs",
  "eth_getTransactionByHash",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getBlockTransactionCountByNumber",
  "eth_getBlockTransactionCountByHash",
  "ext_getBlockReceipts",
  "eth_getTransactionReceipt",
  "get_token_balances",
  "get_token_metadata",
  "trace_block",
  "trace_transaction",
  "watch_getTransfersByAddress",
  "watch_getTransfers",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
];

test("the table holds exactly the interface's methods and REST routes", () => {
  const table = createOperationTable([
    // The engine is never asked: only the table's shape is under test.
    ...createNodeOperations({ engine: {} as never, head: {} as never }),
    // The index is never reached: only the table's shape is under test.
    ...createTransferOperations({ chain: { nativeSymbol: "ETH" } } as never),
    // The EVM family's daily figures, as compose/dataPath.ts hands them (their reads never reached).
    ...createStatsOperations({ days: { schema: evmDayStats.schema, reads: {} as never } } as never),
    ...createTokenOperations({} as never),
  ]);
  const of = (group: string) =>
    table.list
      .filter((op) => op.group === group)
      .map((op) => op.method)
      .sort();
  expect(of("Methods")).toEqual([...METHODS].sort());
  expect(of("NodeMethods")).toEqual([...NODE_METHODS].sort());
  expect(table.list.flatMap((op) => (op.rest ? [op.rest.name] : [])).sort()).toEqual([...REST].sort());
  expect(table.byRestName("get_token_balances")?.method).toBe("watch_getTokenBalances");
});
