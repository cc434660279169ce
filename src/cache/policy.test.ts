/**
 * wrongBlock on answers recorded from anvil (a block with one transfer, an empty block after it, a
 * transaction still in the mempool) and on malformed variants of them: an answer about block N names block
 * N (its number, and its hash where the call names one), or it is refused with a message saying why.
 */
import { describe, expect, test } from "bun:test";
import { evmBlockRefs } from "../families/evm/blockRef";
import { EVM_POLICIES } from "../families/evm/methods";
import { wrongBlock } from "./policy";

const HASH_1 = "0xadb88e3bcab7a78b05e2a092ee7aa69988bac36518dec7766ec41097a8670101";
const HASH_2 = "0x6c0b8fdbdedeff478bd6389372adcba571f0ca3ddbb73bb67ba519062ecab556";
const TX = "0xa23b52004fe574000765fbe20a311b2785a318c9dbe6b0bf6a4c1f8936f57ff3";
const PENDING_TX = "0x618a380f8f5fc0eb360f2f77650c4c62c276e427baf2ccc17eacb233243289f5";
const BLOOM = `0x${"0".repeat(512)}`;
const EMPTY_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";

const header = {
  sha3Uncles: "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
  miner: "0x0000000000000000000000000000000000000000",
  logsBloom: BLOOM,
  difficulty: "0x0",
  gasLimit: "0x1c9c380",
  timestamp: "0x6b07d6a3",
  extraData: "0x",
  nonce: "0x0000000000000000",
  withdrawalsRoot: EMPTY_ROOT,
  blobGasUsed: "0x0",
  excessBlobGas: "0x0",
  parentBeaconBlockRoot: `0x${"0".repeat(64)}`,
  requestsHash: "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  totalDifficulty: "0x0",
  uncles: [],
  withdrawals: [],
};
const block1 = {
  hash: HASH_1,
  parentHash: "0xcaba24e357a4bcc02febd0b5175ee6db5a6ccf72e2875947bfffcfbd01b6cb75",
  ...header,
  stateRoot: "0x14671edd56a0f3baae8060f1000dd52d5133729f9adac494b6dc8dfb1026b6c7",
  transactionsRoot: "0x6dd9a37bc24f352bcab791cc4ff2ed174a0ab4ea0d24910a1c27eb24435f9d4f",
  receiptsRoot: "0xf78dfb743fbd92ade140711c8bbc542b5e307f0ab7984eff35d751969fe57efa",
  number: "0x1",
  gasUsed: "0x5208",
  mixHash: "0x608c27d8f743bda2120aedb6afea4f82abb78af2212ed400b12a07bf57be11e2",
  baseFeePerGas: "0x3b9aca00",
  size: "0x2db",
  transactions: [TX],
};
const block2 = {
  hash: HASH_2,
  parentHash: HASH_1,
  ...header,
  stateRoot: "0x6618b02514012380e5e47e079998efcea1712de883e3f9676fc556f0dd7cb7fe",
  transactionsRoot: EMPTY_ROOT,
  receiptsRoot: EMPTY_ROOT,
  number: "0x2",
  gasUsed: "0x0",
  mixHash: "0xe6eeea3760c959d8de80c642dee2795b32db4d3bc5bffa2ca41866563c1f77bd",
  baseFeePerGas: "0x342a1c58",
  size: "0x267",
  transactions: [],
};
const transfer = {
  type: "0x2",
  chainId: "0x7a69",
  nonce: "0x0",
  gas: "0x5208",
  maxFeePerGas: "0x77359400",
  maxPriorityFeePerGas: "0x3b9aca00",
  to: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  value: "0x1",
  accessList: [],
  input: "0x",
  r: "0x7ca003a6a2adcce9641e808dcecdedf7c37ca5f48c326a17e25406471de8d1ee",
  s: "0x53a15f6568f6cf8ccf47cb2f77585c4b71ba3a579bfcc82de7a528889b92a705",
  yParity: "0x0",
  v: "0x0",
  hash: TX,
  blockHash: HASH_1,
  blockNumber: "0x1",
  transactionIndex: "0x0",
  from: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  gasPrice: "0x77359400",
  blockTimestamp: "0x6b07d6a3",
};
/** The same transfer sent with automine off: in the mempool, in no block yet. */
const pendingTransfer = {
  ...transfer,
  nonce: "0x1",
  value: "0x2",
  hash: PENDING_TX,
  blockHash: null,
  blockNumber: null,
  transactionIndex: null,
  blockTimestamp: undefined,
};
const receipt = {
  type: "0x2",
  status: "0x1",
  cumulativeGasUsed: "0x5208",
  logs: [],
  logsBloom: BLOOM,
  transactionHash: TX,
  transactionIndex: "0x0",
  blockHash: HASH_1,
  blockNumber: "0x1",
  gasUsed: "0x5208",
  effectiveGasPrice: "0x77359400",
  blobGasPrice: "0x1",
  from: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  to: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  contractAddress: null,
  blockTimestamp: 1795675811,
};
const trace = {
  action: {
    from: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    callType: "call",
    gas: "0x0",
    input: "0x",
    to: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    value: "0x1",
  },
  blockHash: HASH_1,
  blockNumber: 1,
  result: { gasUsed: "0x0", output: "0x" },
  subtraces: 0,
  traceAddress: [],
  transactionHash: TX,
  transactionPosition: 0,
  type: "call",
};

/** wrongBlock of a method's policy, on the answer as a node writes it. */
const check = (method: string, params: unknown[], answer: unknown) =>
  wrongBlock(EVM_POLICIES[method]!, params, JSON.stringify(answer), evmBlockRefs);

describe("answers that name the block asked pass", () => {
  test("blocks, receipts, transactions and traces, by number and by hash; an empty block's empty lists", () => {
    expect(check("eth_getBlockByNumber", ["0x1", false], block1)).toBeUndefined();
    expect(check("eth_getBlockByHash", [HASH_2, false], block2)).toBeUndefined();
    expect(check("eth_getBlockReceipts", ["0x1"], [receipt])).toBeUndefined();
    expect(check("eth_getBlockReceipts", [HASH_1], [receipt])).toBeUndefined();
    expect(check("eth_getBlockReceipts", ["0x2"], [])).toBeUndefined();
    expect(check("trace_block", ["0x1"], [trace])).toBeUndefined();
    expect(check("trace_block", ["0x2"], [])).toBeUndefined();
    expect(check("eth_getTransactionByHash", [TX], transfer)).toBeUndefined();
    expect(check("eth_getTransactionReceipt", [TX], receipt)).toBeUndefined();
    expect(check("eth_getTransactionByBlockNumberAndIndex", ["0x1", "0x0"], transfer)).toBeUndefined();
    expect(check("eth_getTransactionByBlockHashAndIndex", [HASH_1, "0x0"], transfer)).toBeUndefined();
  });

  test("null is not found; a transaction not yet in a block names none", () => {
    for (const [method, params] of [
      ["eth_getBlockByNumber", ["0x9", false]],
      ["eth_getBlockByHash", [HASH_1, false]],
      ["eth_getBlockReceipts", ["0x9"]],
      ["eth_getTransactionReceipt", [TX]],
    ] as const) {
      expect(check(method, [...params], null)).toBeUndefined();
    }
    expect(check("eth_getTransactionByHash", [PENDING_TX], pendingTransfer)).toBeUndefined();
    // A node may leave the block's members of a pending transaction out rather than write them null.
    const { blockHash: _h, blockNumber: _n, transactionIndex: _i, ...withoutBlock } = pendingTransfer;
    expect(check("eth_getTransactionByHash", [PENDING_TX], withoutBlock)).toBeUndefined();
    // geth's pending block has no hash yet.
    expect(check("eth_getBlockByNumber", ["pending", false], { ...block2, hash: null })).toBeUndefined();
  });
});

describe("answers that do not name the block asked are refused, saying why", () => {
  test("another block, by number or by hash, or one element of a list about another block", () => {
    expect(check("eth_getBlockByNumber", ["0x1", false], block2)).toBe(
      "upstream answered about block 2 when asked about block 1",
    );
    expect(check("eth_getBlockByHash", [HASH_1, false], { ...block1, hash: HASH_2 })).toBe(
      `upstream answered about block ${HASH_2} when asked about block ${HASH_1}`,
    );
    expect(check("eth_getBlockReceipts", [HASH_2], [receipt])).toBe(
      `upstream answered about block ${HASH_1} when asked about block ${HASH_2}`,
    );
    expect(check("eth_getBlockReceipts", ["0x1"], [receipt, { ...receipt, blockNumber: "0x2" }])).toBe(
      "upstream answered about block 2 when asked about block 1",
    );
    expect(check("trace_block", ["0x2"], [trace])).toBe(
      "upstream answered about block 1 when asked about block 2",
    );
    expect(check("eth_getTransactionByBlockHashAndIndex", [HASH_2, "0x0"], transfer)).toBe(
      `upstream answered about block ${HASH_1} when asked about block ${HASH_2}`,
    );
  });

  test("a block without its number or its hash", () => {
    const { number: _n, ...noNumber } = block1;
    const { hash: _h, ...noHash } = block1;
    expect(check("eth_getBlockByNumber", ["0x1", false], { blockHash: 5 })).toBe(
      "upstream answered a block without its number",
    );
    expect(check("eth_getBlockByNumber", ["0x1", false], {})).toBe(
      "upstream answered a block without its number",
    );
    expect(check("eth_getBlockByNumber", ["0x1", false], noNumber)).toBe(
      "upstream answered a block without its number",
    );
    expect(check("eth_getBlockByNumber", ["0x1", false], noHash)).toBe(
      "upstream answered a block without its hash",
    );
    expect(check("eth_getBlockByNumber", ["0x1", false], { ...block1, hash: null })).toBe(
      "upstream answered a block without its hash",
    );
    expect(check("eth_getBlockByHash", [HASH_1, false], { number: "0x1" })).toBe(
      "upstream answered a block without its hash",
    );
  });

  test("a transaction, receipt or trace without its block, where the call names one or it must be mined", () => {
    const { blockHash: _h, ...receiptNoHash } = receipt;
    expect(check("eth_getBlockReceipts", ["0x1"], [receiptNoHash])).toBe(
      "upstream answered without its blockHash",
    );
    expect(check("trace_block", ["0x1"], [{ ...trace, blockNumber: undefined }])).toBe(
      "upstream answered without its blockNumber",
    );
    expect(check("eth_getTransactionByBlockNumberAndIndex", ["0x1", "0x0"], pendingTransfer)).toBe(
      "upstream answered without its blockNumber",
    );
    expect(check("eth_getTransactionByBlockHashAndIndex", [HASH_1, "0x0"], pendingTransfer)).toBe(
      "upstream answered without its blockNumber",
    );
    const { blockHash: _t, ...transferNoHash } = transfer;
    expect(check("eth_getTransactionByHash", [TX], transferNoHash)).toBe(
      "upstream answered without its blockHash",
    );
    expect(check("eth_getTransactionByHash", [TX], { ...transfer, blockNumber: null })).toBe(
      "upstream answered without its blockNumber",
    );
  });

  test("the wrong shape: no object where one belongs, a number or hash that is none", () => {
    for (const answer of [5, "0x1", true, [], [block1]]) {
      expect(check("eth_getBlockByNumber", ["0x1", false], answer)).toBe(
        "upstream answered a malformed result",
      );
    }
    for (const answer of [receipt, [5], [null], "0x1"]) {
      expect(check("eth_getBlockReceipts", ["0x1"], answer)).toBe("upstream answered a malformed result");
    }
    expect(check("eth_getBlockByNumber", ["0x1", false], { ...block1, number: "one" })).toBe(
      "upstream answered a malformed block number",
    );
    for (const hash of [5, "0x12", `${HASH_1}00`]) {
      expect(check("eth_getBlockByNumber", ["0x1", false], { ...block1, hash })).toBe(
        "upstream answered a malformed block hash",
      );
    }
  });
});
