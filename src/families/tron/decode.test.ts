import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TransferKind } from "../../transferKind";
import { tronAddresses } from "./addresses";
import {
  APPROVAL_TOPIC,
  decodeTronBlock,
  INTERNAL_LOG_INDEX,
  infosMatch,
  readExact,
  TRANSFER_TOPIC,
  type TronBlockJson,
  type TronInfoJson,
  type TronTxJson,
} from "./decode";

const FIXTURES = join(import.meta.dir, "..", "..", "..", "test", "fixtures", "tron");
const fixture = (path: string) => readFileSync(join(FIXTURES, path), "utf8");

/** TronGrid's v1 transactions (mainnet) in java-tron's `visible: false` form: asset_name as hex of its text. */
function nodeForm(tx: TronTxJson): TronTxJson {
  const [contract] = tx.raw_data.contract;
  const value = { ...contract!.parameter.value };
  if (contract!.type === "TransferAssetContract") {
    value.asset_name = Buffer.from(String(value.asset_name)).toString("hex");
  }
  return {
    txID: tx.txID,
    ret: tx.ret?.map((r) => ({ contractRet: r.contractRet })),
    raw_data: { contract: [{ type: contract!.type, parameter: { value } }] },
  };
}

const block = (txs: TronTxJson[], number = 69316644): TronBlockJson => ({
  blockID: `${number.toString(16).padStart(16, "0")}${"ab".repeat(24)}`,
  block_header: {
    raw_data: {
      number,
      parentHash: `${(number - 1).toString(16).padStart(16, "0")}${"cd".repeat(24)}`,
      timestamp: 1738601751000,
      witness_address: "41b487cdc02de90f15ac89a68c82f44cbfe3d915ea",
    },
  },
  ...(txs.length > 0 ? { transactions: txs } : {}),
});

const b58 = (hex41: string) => tronAddresses.fromBytes(Buffer.from(hex41, "hex"));

describe("decodeTronBlock: Ledger Live's recorded mainnet transactions and infos", () => {
  const txs = readExact<TronTxJson[]>(fixture("mainnet/v1-account-transactions.json")).map(nodeForm);
  const infosById = readExact<Record<string, TronInfoJson>>(fixture("mainnet/transactioninfos.json"));
  const infos = txs.map((t) => infosById[t.txID]!);
  const decoded = decodeTronBlock(block(txs), infos);

  test("holds exactly the TRC-10, the two TRX and the USDT transfer", () => {
    const rows = decoded.transfers.map((r) => ({
      ...r,
      from: b58(r.from),
      to: r.to && b58(r.to),
      contract: r.contract && b58(r.contract),
    }));
    const account = b58("416e3b44b96104b26f84057974a1f0c9880f7c9b13");
    expect(rows).toEqual([
      {
        transactionIndex: 0,
        logIndex: -1,
        transactionHash: "034897cb63856eeb5c224c5fa9ff5d4c94af36d9e1e9087d5bcc9fd665fb5a6d",
        kind: TransferKind.trc10,
        contract: null,
        assetId: "1005065",
        from: b58("414a590bf4bbbb25e162987084d3529ae2078ac177"),
        to: account,
        value: 8_888_880_000n,
        fee: 0n,
        error: false,
      },
      {
        transactionIndex: 1,
        logIndex: -1,
        transactionHash: "5144c4f5a52a08e57dfdf550b4f925c396e68c59a80339cea69497bee116437f",
        kind: TransferKind.trx,
        contract: null,
        assetId: null,
        from: b58("4121b72c741caed659bf48c3fa2b717b007c20fb4b"),
        to: account,
        value: 1n,
        fee: 0n,
        error: false,
      },
      {
        transactionIndex: 2,
        logIndex: -1,
        transactionHash: "3f8b651bdf4a301a08693a2fa4b0d5fd808927ad658aa279ba030215fecdd6b3",
        kind: TransferKind.trx,
        contract: null,
        assetId: null,
        from: account,
        to: b58("4115e75fb8683b09c857d7b8a740b1d0234a3ca97b"),
        value: 150_466_320n,
        fee: 1_100_000n,
        error: false,
      },
      {
        transactionIndex: 3,
        logIndex: 0,
        transactionHash: "0130dfde9281a48378109039ef512229d5359fbee2a8adbb17ad73aebc67ea99",
        kind: TransferKind.erc20,
        // USDT on mainnet
        contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
        assetId: null,
        from: account,
        to: b58("41ec20315a879c48f5e3a6a1c9826d5225f8b658b8"),
        value: 41_677_389n,
        fee: 26_420_100n,
        error: false,
      },
    ]);
    expect(decoded.approvals).toEqual([]);
    expect(decoded.tokens).toEqual(["41a614f803b6fd780986a42c78ec9c7f77e6ded13c"]);
    expect(decoded.assets).toEqual(["1005065"]);
  });

  test("the block's figures are the infos' sums", () => {
    expect(decoded.sums).toEqual({
      trxTransfers: 2,
      trc20Transfers: 1,
      trxMoved: 150_466_321n,
      totalFees: 27_520_100n,
      energyFee: 26_420_100n,
      netFee: 100_000n,
      energyUsed: 130_285n,
      bandwidthUsed: 283n + 265n + 345n,
    });
    expect(decoded.transactions.map((t) => [t.contractType, t.contractRet, t.owner, t.to])).toEqual([
      [
        "TransferAssetContract",
        "SUCCESS",
        "414a590bf4bbbb25e162987084d3529ae2078ac177",
        "416e3b44b96104b26f84057974a1f0c9880f7c9b13",
      ],
      [
        "TransferContract",
        "SUCCESS",
        "4121b72c741caed659bf48c3fa2b717b007c20fb4b",
        "416e3b44b96104b26f84057974a1f0c9880f7c9b13",
      ],
      [
        "TransferContract",
        "SUCCESS",
        "416e3b44b96104b26f84057974a1f0c9880f7c9b13",
        "4115e75fb8683b09c857d7b8a740b1d0234a3ca97b",
      ],
      [
        "TriggerSmartContract",
        "SUCCESS",
        "416e3b44b96104b26f84057974a1f0c9880f7c9b13",
        "41a614f803b6fd780986a42c78ec9c7f77e6ded13c",
      ],
    ]);
    expect(decoded.addresses.sort()).toEqual(
      [
        "414a590bf4bbbb25e162987084d3529ae2078ac177",
        "416e3b44b96104b26f84057974a1f0c9880f7c9b13",
        "4121b72c741caed659bf48c3fa2b717b007c20fb4b",
        "4115e75fb8683b09c857d7b8a740b1d0234a3ca97b",
        "41a614f803b6fd780986a42c78ec9c7f77e6ded13c",
        "41ec20315a879c48f5e3a6a1c9826d5225f8b658b8",
      ].sort(),
    );
  });

  test("infos of other transactions are no match (a torn read)", () => {
    expect(infosMatch(block(txs), [...infos].reverse())).toContain("transaction info 0 is for");
    expect(infosMatch(block(txs), infos.slice(1))).toContain("4 transactions but 3 transaction infos");
    expect(() => decodeTronBlock(block(txs), infos.slice(1))).toThrow();
  });
});

// java-tron's forms of what the stand-in's scenario does not hold yet (gettransactioninfobyid.md's internal
// transactions, the TRC-20 events' topics): decoded from written answers.
const word = (hex41: string) => `000000000000000000000000${hex41.slice(2)}`;
const A = `41${"11".repeat(20)}`;
const B = `41${"22".repeat(20)}`;
const C = `41${"33".repeat(20)}`;
const TOKEN = `41${"44".repeat(20)}`;
const NFT = `41${"55".repeat(20)}`;
const trigger = (txID: string, contractRet: string, callValue?: number | string): TronTxJson => ({
  txID,
  ret: [{ contractRet }],
  raw_data: {
    contract: [
      {
        type: "TriggerSmartContract",
        parameter: {
          value: {
            owner_address: A,
            contract_address: TOKEN,
            data: "23b872dd",
            ...(callValue === undefined ? {} : { call_value: callValue }),
          },
        },
      },
    ],
  },
});

describe("decodeTronBlock: java-tron's forms", () => {
  test("a transferFrom with its Approval, a TRC-721 Transfer, call_value and internal TRX, in log_index order", () => {
    const tx = trigger("aa".repeat(32), "SUCCESS", 7_000_000);
    const info: TronInfoJson = {
      id: "aa".repeat(32),
      fee: 345_000,
      receipt: { energy_usage_total: 30_000, energy_fee: 345_000, net_usage: 300 },
      log: [
        { address: TOKEN.slice(2), topics: [TRANSFER_TOPIC, word(A), word(B)], data: `${"0".repeat(62)}64` },
        { address: TOKEN.slice(2), topics: [APPROVAL_TOPIC, word(A), word(C)], data: `${"0".repeat(62)}0a` },
        { address: NFT.slice(2), topics: [TRANSFER_TOPIC, word(B), word(C), `${"0".repeat(62)}2a`] },
        // not a transfer: another event, and a Transfer with its value indexed and no data
        { address: TOKEN.slice(2), topics: [`${"99".repeat(32)}`, word(A)], data: "" },
      ],
      internal_transactions: [
        { caller_address: TOKEN, transferTo_address: C, callValueInfo: [{ callValue: 2_000_000 }] },
        { caller_address: TOKEN, transferTo_address: B, callValueInfo: [{}] },
        {
          caller_address: TOKEN,
          transferTo_address: B,
          callValueInfo: [{ callValue: 5, tokenId: "1000001" }],
        },
        { caller_address: TOKEN, transferTo_address: B, callValueInfo: [{ callValue: 9 }], rejected: true },
        { caller_address: TOKEN, transferTo_address: A, callValueInfo: [{ callValue: 1_000_000 }] },
      ],
    };
    const first = {
      id: "bb".repeat(32),
      receipt: { net_usage: 200 },
      log: [{ address: TOKEN.slice(2), topics: [APPROVAL_TOPIC, word(B), word(A)], data: "00".repeat(32) }],
    };
    const d = decodeTronBlock(block([trigger("bb".repeat(32), "SUCCESS"), tx]), [first, info]);
    expect(
      d.transfers.map((r) => [r.transactionIndex, r.logIndex, r.kind, r.contract, r.from, r.to, r.value]),
    ).toEqual([
      [1, -1, TransferKind.trx, null, A, TOKEN, 7_000_000n],
      // the block's first log was the first transaction's Approval: this one's logs are 1, 2, 3, 4
      [1, 1, TransferKind.erc20, TOKEN, A, B, 100n],
      [1, 3, TransferKind.erc721, NFT, B, C, 42n],
      [1, INTERNAL_LOG_INDEX, TransferKind.trx, null, TOKEN, C, 2_000_000n],
      [1, INTERNAL_LOG_INDEX + 1, TransferKind.trx, null, TOKEN, A, 1_000_000n],
    ]);
    expect(d.approvals.map((r) => [r.transactionIndex, r.logIndex, r.owner, r.spender, r.value])).toEqual([
      [0, 0, B, A, 0n],
      [1, 2, A, C, 10n],
    ]);
    expect(d.sums.trxMoved).toBe(10_000_000n);
    expect(d.sums.trxTransfers).toBe(3);
    expect(d.sums.trc20Transfers).toBe(1);
    expect(d.tokens.sort()).toEqual([TOKEN, NFT].sort());
  });

  test("a reverted call keeps its call_value row as failed, and nothing else moves", () => {
    const info: TronInfoJson = {
      id: "cc".repeat(32),
      fee: 1_890_000,
      result: "FAILED",
      receipt: { energy_usage_total: 4_500, energy_fee: 1_890_000, result: "REVERT" },
      internal_transactions: [
        { caller_address: TOKEN, transferTo_address: C, callValueInfo: [{ callValue: 5 }], rejected: true },
      ],
    };
    const d = decodeTronBlock(block([trigger("cc".repeat(32), "REVERT", 3)]), [info]);
    expect(d.transfers).toEqual([
      {
        transactionIndex: 0,
        logIndex: -1,
        transactionHash: "cc".repeat(32),
        kind: TransferKind.trx,
        contract: null,
        assetId: null,
        from: A,
        to: TOKEN,
        value: 3n,
        fee: 1_890_000n,
        error: true,
      },
    ]);
    expect(d.sums).toMatchObject({
      trxTransfers: 0,
      trxMoved: 0n,
      totalFees: 1_890_000n,
      energyUsed: 4_500n,
    });
    expect(d.transactions[0]!.contractRet).toBe("REVERT");
  });

  test("a contract creation's call_value pays the new contract", () => {
    const tx: TronTxJson = {
      txID: "dd".repeat(32),
      ret: [{ contractRet: "SUCCESS" }],
      raw_data: {
        contract: [
          {
            type: "CreateSmartContract",
            parameter: { value: { owner_address: A, new_contract: { origin_address: A, call_value: 11 } } },
          },
        ],
      },
    };
    const d = decodeTronBlock(block([tx]), [{ id: "dd".repeat(32), contract_address: NFT, receipt: {} }]);
    expect(d.transfers.map((r) => [r.from, r.to, r.value])).toEqual([[A, NFT, 11n]]);
    expect(d.transactions[0]!.created).toBe(NFT);
  });

  test("an empty block (no `transactions`), and block 0 whose number the node leaves out", () => {
    const empty = block([], 5);
    expect(decodeTronBlock(empty, []).transfers).toEqual([]);
    const genesis = block([], 0);
    delete genesis.block_header.raw_data.number;
    expect(decodeTronBlock(genesis, []).number).toBe(0n);
  });

  test("readExact keeps integers past 2^53 exact", () => {
    const text =
      '{"amount":9223372036854775807,"fee":12,"list":[12345678901234567890, 1],"hex":"41123456789012345678"}';
    const v = readExact<{ amount: string; fee: number; list: unknown[]; hex: string }>(text);
    expect(v).toEqual({
      amount: "9223372036854775807",
      fee: 12,
      list: ["12345678901234567890", 1],
      hex: "41123456789012345678",
    });
    const tx: TronTxJson = {
      txID: "ee".repeat(32),
      ret: [{ contractRet: "SUCCESS" }],
      raw_data: {
        contract: [
          {
            type: "TransferAssetContract",
            parameter: {
              value: { owner_address: A, to_address: B, asset_name: "31303030303031", amount: v.amount },
            },
          },
        ],
      },
    };
    expect(decodeTronBlock(block([tx]), [{ id: "ee".repeat(32) }]).transfers[0]).toMatchObject({
      kind: TransferKind.trc10,
      assetId: "1000001",
      value: 9_223_372_036_854_775_807n,
    });
  });
});
