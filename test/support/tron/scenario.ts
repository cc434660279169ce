/**
 * The stand-in java-tron's one scenario chain, held in memory, and the types every face of the stand-in
 * (its HTTP API, its JSON-RPC hook in test/support/tron/jsonrpc.ts) reads it through. Blocks and transaction
 * infos are given in java-tron's HTTP form (`visible: false`, `detail` transactions), as
 * test/fixtures/tron/SOURCES.md records them.
 */
import { AbiCoder, keccak256, id as keccakText, solidityPackedKeccak256 } from "ethers";
import {
  addressOut,
  bytesToHex,
  hexToBytes,
  type JsonObject,
  keyFromPrivate,
  rawDataJson,
  recoverAddress,
  sha256Bytes,
  sha256Hex,
  signDigest,
  type TronKey,
  txIdOf,
} from "./codec";
import {
  type Bytes,
  type ContractParameter,
  encodeBlockHeaderRaw,
  encodeTransaction,
  type RawTransaction,
} from "./protobuf";

export type TronNetwork = "NILE" | "TRON";

/** Block 0's blockID: its last 4 bytes are the chain id (SOURCES.md says where each was read). */
export const GENESIS_BLOCK_ID: Record<TronNetwork, string> = {
  TRON: "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
  NILE: "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc",
};
export const CHAIN_ID: Record<TronNetwork, string> = { TRON: "0x2b6653dc", NILE: "0xcd8690dc" };

// ---- java-tron's HTTP forms (visible: false) ----

export interface TronContractJson {
  parameter: { value: JsonObject; type_url: string };
  type: string;
}
export interface TronTransactionJson {
  ret: { contractRet: string }[];
  signature: string[];
  txID: string;
  raw_data: {
    contract: TronContractJson[];
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    fee_limit?: number;
    timestamp?: number;
  };
  raw_data_hex: string;
}
export interface TronBlockHeaderJson {
  raw_data: {
    number: number;
    txTrieRoot: string;
    witness_address: string;
    parentHash: string;
    version: number;
    timestamp: number;
  };
  witness_signature: string;
}
export interface TronBlockJson {
  blockID: string;
  block_header: TronBlockHeaderJson;
  transactions?: TronTransactionJson[];
}
/** A log as java-tron writes it: `address` 20 bytes hex without `41`, topics without `0x`. */
export interface TronLogJson {
  address: string;
  topics: string[];
  data?: string;
}
export interface TronReceiptJson {
  energy_usage?: number;
  energy_fee?: number;
  origin_energy_usage?: number;
  energy_usage_total?: number;
  net_usage?: number;
  net_fee?: number;
  result?: string;
  energy_penalty_total?: number;
}
export interface TronTransactionInfoJson {
  id: string;
  fee?: number;
  blockNumber: number;
  blockTimeStamp: number;
  contractResult: string[];
  contract_address?: string;
  receipt: TronReceiptJson;
  log?: TronLogJson[];
  result?: "FAILED";
  resMessage?: string;
  withdraw_amount?: number;
  unfreeze_amount?: number;
  internal_transactions?: JsonObject[];
}

/** What the JSON-RPC face (and any other reader) gets: the canonical chain in java-tron's HTTP form. */
export interface TronChainView {
  network: TronNetwork;
  /** `0x2b6653dc` or `0xcd8690dc` */
  chainId: string;
  genesisBlockId: string;
  headNumber(): number;
  solidifiedNumber(): number;
  /** Block `n` of the canonical chain with its transactions (`detail`), or undefined. */
  block(n: number): TronBlockJson | undefined;
  blockById(id: string): TronBlockJson | undefined;
  /** The infos of block `n`'s transactions, in block order ([] for an empty block). */
  infos(n: number): TronTransactionInfoJson[] | undefined;
  transaction(txID: string): { tx: TronTransactionJson; blockNumber: number } | undefined;
  info(txID: string): TronTransactionInfoJson | undefined;
  /** A TRC-20 constant call (`balanceOf`, `decimals`, `symbol`, `name`, `totalSupply`) at block `n`. */
  call(contractHex41: string, data: string, atBlock?: number): { ok: boolean; result: string } | undefined;
  /** TRX balance in sun at block `n` (default head), 0n for an unknown account. */
  balance(addressHex41: string, atBlock?: number): bigint;
  /** Runtime code (hex, no `0x`) at an address at the head, or undefined. */
  codeOf(addressHex41: string): string | undefined;
}

// ---- the scenario's parts ----

const keyOf = (label: string): TronKey =>
  keyFromPrivate(sha256Hex(new TextEncoder().encode(`tron-standin:${label}`)));

/** Deterministic keys: every test knows them (the stand-in is a test part, never a wallet). */
export const SCENARIO_KEYS = {
  alice: keyOf("alice"),
  bob: keyOf("bob"),
  carol: keyOf("carol"),
  issuer: keyOf("issuer"),
  /** Part 2's watched deposit address (test/support/tron/part2.ts). */
  dave: keyOf("dave"),
  /** Part 2's never-funded address: its only payment is rejected. */
  erin: keyOf("erin"),
  witnesses: [keyOf("witness-0"), keyOf("witness-1"), keyOf("witness-2")],
} as const;

/** The TRC-20 of the scenario: USDT-like, 6 decimals. */
export const TRC20 = {
  address: `41${keccakText("tron-standin:trc20").slice(-40)}`,
  name: "Tether USD",
  symbol: "USDT",
  decimals: 6,
  owner: SCENARIO_KEYS.issuer.hex,
} as const;

/** The TRC-10 asset of the scenario. */
export const TRC10 = {
  id: "1000001",
  name: "StandinToken",
  abbr: "STT",
  precision: 6,
  owner: SCENARIO_KEYS.issuer.hex,
  totalSupply: 100_000_000_000_000n,
} as const;

/** The TRC-721 of the scenario: the issuer holds token ids 1 to 5 at genesis. */
export const TRC721 = {
  address: `41${keccakText("tron-standin:trc721").slice(-40)}`,
  name: "Standin Collectible",
  symbol: "SCOL",
  owner: SCENARIO_KEYS.issuer.hex,
} as const;

/** Genesis allocations (sun / token units). */
export const GENESIS_TRX: Readonly<Record<string, bigint>> = {
  [SCENARIO_KEYS.alice.hex]: 5_000_000_000n,
  [SCENARIO_KEYS.bob.hex]: 1_000_000_000n,
  [SCENARIO_KEYS.issuer.hex]: 50_000_000_000n,
};
export const GENESIS_TRC20: Readonly<Record<string, bigint>> = {
  [SCENARIO_KEYS.alice.hex]: 1_000_000_000n, // 1,000 USDT
  [SCENARIO_KEYS.issuer.hex]: 1_000_000_000_000n,
};
/** TRC-10 holdings at genesis: the whole supply with its issuer. */
export const GENESIS_TRC10: Readonly<Record<string, Readonly<Record<string, bigint>>>> = {
  [TRC10.owner]: { [TRC10.id]: TRC10.totalSupply },
};
export const GENESIS_TRC721: ReadonlyMap<bigint, string> = new Map(
  [1n, 2n, 3n, 4n, 5n].map((id) => [id, TRC721.owner]),
);

export const SELECTORS = {
  balanceOf: "70a08231",
  decimals: "313ce567",
  symbol: "95d89b41",
  name: "06fdde03",
  totalSupply: "18160ddd",
  transfer: "a9059cbb",
  transferFrom: "23b872dd",
  approve: "095ea7b3",
  allowance: "dd62ed3e",
  ownerOf: "6352211e",
  payout: keccakText("payout(address[],uint256[],uint256[])").slice(2, 10),
} as const;
export const TRANSFER_TOPIC = keccakText("Transfer(address,address,uint256)").slice(2);
export const APPROVAL_TOPIC = keccakText("Approval(address,address,uint256)").slice(2);
/** An internal transaction's `note`: hex of "call" (as recorded: privnet/gettransactioninfobyid-internal.json). */
const CALL_NOTE = bytesToHex(new TextEncoder().encode("call"));

/** Fees and resource figures the scenario charges (constants; java-tron's come from chain parameters). */
const BLOCK_INTERVAL_MS = 3_000;
const CREATE_ACCOUNT_FEE_SUN = 1_000_000n;
const NEW_ACCOUNT_NET_FEE_SUN = 100_000n;
/** A USDT-like transfer: its energy, of which the dynamic energy model's penalty, and the sender's own share. */
const TRC20_TRANSFER_ENERGY = 64_285;
const TRC20_TRANSFER_PENALTY = 34_635;
const SENDER_OWN_ENERGY = 1_000;
const TRC20_REVERT_ENERGY = 4_500;
const ENERGY_PRICE_SUN = 420;
/** Energy of part 2's calls (all burned at ENERGY_PRICE_SUN: their senders stake none). */
const ENERGY = {
  approve: 22_043,
  transferFrom: 36_218,
  trc721Transfer: 41_366,
  payout: 31_870,
  /** per internal transfer of a payout */
  payoutPerTransfer: 9_003,
  revert: 2_116,
  create: 118_524,
} as const;
const SIGNATURE_BYTES = 65;
const BLOCK_VERSION = 32;
/** Genesis time: blocks cross a UTC midnight (2025-01-01) at block 10. */
export const SCENARIO_GENESIS_MS = Date.UTC(2025, 0, 1) - 10 * BLOCK_INTERVAL_MS + 1_500;

interface Account {
  balance: bigint;
  assets: Map<string, bigint>;
  createTime: number;
  lastOperation?: number;
}
interface State {
  accounts: Map<string, Account>;
  trc20: Map<string, bigint>;
  /** `${owner}:${spender}` (both `41...` hex) to the TRC-20 allowance */
  allowances: Map<string, bigint>;
  /** TRC-721 token id to its owner (`41...` hex) */
  trc721: Map<bigint, string>;
  /** contracts created on the chain (`41...` hex), beside the genesis TRC-20 and TRC-721 */
  created: Map<string, { name: string; bytecode: string; origin: string }>;
}
const cloneState = (s: State): State => ({
  accounts: new Map([...s.accounts].map(([k, a]) => [k, { ...a, assets: new Map(a.assets) }])),
  trc20: new Map(s.trc20),
  allowances: new Map(s.allowances),
  trc721: new Map(s.trc721),
  created: new Map(s.created),
});

/**
 * What one transaction moved, as the stand-in executed it (test/support/tron/truth.ts reads these, never the
 * HTTP answers). Addresses `41...` hex; `amount` in sun, token units, or the TRC-721 token id.
 */
export type Movement =
  | { kind: "trx"; via: "transfer" | "call_value"; from: string; to: string; amount: bigint }
  | {
      kind: "trx" | "trc10";
      via: "internal";
      from: string;
      to: string;
      amount: bigint;
      /** the TRC-10 asset id (kind trc10) */
      asset?: string;
      internalIndex: number;
      /** a rejected internal transfer moved nothing */
      rejected: boolean;
    }
  | { kind: "trc10"; via: "transfer"; from: string; to: string; amount: bigint; asset: string }
  | {
      kind: "trc20" | "trc721" | "approval";
      via: "log";
      contract: string;
      from: string;
      to: string;
      amount: bigint;
      logIndex: number;
    }
  | { kind: "create"; via: "create"; from: string; to: string; amount: bigint };

/** A mined transaction's outcome: what it burned (fee in sun), its energy and bandwidth, what it moved. */
export interface Outcome {
  fee: bigint;
  energy: number;
  bandwidth: number;
  movements: Movement[];
}

/** A signed transaction as the chain holds it (its JSON is rendered per request: hex or base58). */
export interface SignedTx {
  raw: RawTransaction;
  rawBytes: Bytes;
  txID: string;
  signatures: Bytes[];
}
export interface StoredTx extends SignedTx {
  contractRet: string;
  outcome: Outcome;
}
export interface StoredBlock {
  number: number;
  blockID: string;
  header: TronBlockHeaderJson;
  txs: StoredTx[];
  infos: TronTransactionInfoJson[];
  state: State;
}

const CONTRACT_RET_NUMBERS: Record<string, number> = { SUCCESS: 1, REVERT: 2 };

/** java-tron's txTrieRoot: a binary sha256 tree over sha256(Transaction bytes); zeros for no transactions. */
function txTrieRoot(txs: StoredTx[]): Bytes {
  let level = txs.map((t) =>
    sha256Bytes(encodeTransaction(t.rawBytes, t.signatures, CONTRACT_RET_NUMBERS[t.contractRet])),
  );
  if (level.length === 0) return new Uint8Array(32);
  while (level.length > 1) {
    const next: Bytes[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const right = level[i + 1];
      next.push(right ? sha256Bytes(new Uint8Array([...level[i]!, ...right])) : level[i]!);
    }
    level = next;
  }
  return level[0]!;
}

/**
 * java-tron's address of the contract a CreateSmartContract makes: keccak256(sha256(raw_data) ++ owner), its
 * last 20 bytes after `41` (Util.generateContractAddress, WalletUtil.generateContractAddress).
 */
export function createdContractAddress(tx: SignedTx): string {
  const owner = tx.raw.contract.value.owner_address;
  return `41${keccak256(new Uint8Array([...hexToBytes(tx.txID), ...owner])).slice(-40)}`;
}

export function renderTransaction(tx: SignedTx & { contractRet: string }, visible: boolean): JsonObject {
  return {
    ret: [{ contractRet: tx.contractRet }],
    signature: tx.signatures.map(bytesToHex),
    txID: tx.txID,
    // printTransactionToJSON adds the created contract's address (hex, whatever `visible` says)
    ...(tx.raw.contract.type === "CreateSmartContract"
      ? { contract_address: createdContractAddress(tx) }
      : {}),
    raw_data: rawDataJson(tx.raw, visible),
    raw_data_hex: bytesToHex(tx.rawBytes),
  };
}

export function signTransaction(raw: RawTransaction, key: TronKey): SignedTx {
  const { rawBytes, txID } = txIdOf(raw);
  return { raw, rawBytes, txID, signatures: [signDigest(hexToBytes(txID), key.privateKey)] };
}

/** Why a transaction cannot enter the pool, in java-tron's broadcast codes and messages; undefined if it can. */
export interface Refusal {
  code: string;
  message: string;
}

const abi = AbiCoder.defaultAbiCoder();
const word = (hex41: string) => `000000000000000000000000${hex41.slice(2)}`;
const TRUE_WORD = `${"0".repeat(63)}1`;
const REVERT_MESSAGE = bytesToHex(new TextEncoder().encode("REVERT opcode executed"));
/** Stand-in runtime of the payout contract part 2 creates (no EVM runs here: see runCall). */
export const PAYOUT_BYTECODE = "6080604052348015600f57600080fd5b50603f80601d6000396000f3fe";

/** A call's data: the function's selector (SELECTORS) and its ABI-encoded arguments (`41...` addresses). */
function callData(fn: keyof typeof SELECTORS, types: string[], values: unknown[]): string {
  const evm = (v: unknown): unknown =>
    typeof v === "string" && /^41[0-9a-f]{40}$/.test(v)
      ? `0x${v.slice(2)}`
      : Array.isArray(v)
        ? v.map(evm)
        : v;
  return SELECTORS[fn] + abi.encode(types, values.map(evm)).slice(2);
}

const logOf = (contract: string, topics: string[], data?: string): TronLogJson => ({
  address: contract.slice(2),
  topics,
  ...(data === undefined ? {} : { data }),
});
const transferLog = (contract: string, from: string, to: string, amount: bigint) =>
  logOf(contract, [TRANSFER_TOPIC, word(from), word(to)], abi.encode(["uint256"], [amount]).slice(2));

type Executed = {
  contractRet: string;
  info: Omit<TronTransactionInfoJson, "blockNumber" | "blockTimeStamp">;
  movements: Movement[];
};
interface CallInput {
  contract: string;
  caller: string;
  data: string;
  callValue: bigint;
  txID: string;
  time: number;
}
type CallRun =
  | { ok: false; energy: number; result: string }
  | {
      ok: true;
      energy: number;
      result: string;
      logs: TronLogJson[];
      internals: JsonObject[];
      movements: Movement[];
    };

const REVERTED: CallRun = { ok: false, energy: ENERGY.revert, result: "" };
const addressArg = (a: string) => `41${a.slice(2).toLowerCase()}`;
const decodeArgs = (types: string[], data: string) =>
  abi.decode(types, `0x${data.slice(8)}`) as unknown as unknown[];

/**
 * Part 2's contract calls, computed (the stand-in runs no EVM) on `state`, which the caller throws away
 * when the call reverts. undefined: the call cannot enter a block (the caller cannot pay its call value).
 */
function runCall(state: State, call: CallInput): CallRun | undefined {
  const { contract, caller, data, callValue } = call;
  const callerAccount = state.accounts.get(caller)!;
  if (callerAccount.balance < callValue) return undefined;
  const selector = data.slice(0, 8);
  try {
    if (contract === TRC20.address && callValue === 0n) return runTrc20(state, caller, selector, data);
    if (contract === TRC721.address && callValue === 0n && selector === SELECTORS.transferFrom) {
      const [fromArg, toArg, tokenId] = decodeArgs(["address", "address", "uint256"], data) as [
        string,
        string,
        bigint,
      ];
      const [from, to] = [addressArg(fromArg), addressArg(toArg)];
      if (from !== caller || state.trc721.get(tokenId) !== from) return REVERTED;
      state.trc721.set(tokenId, to);
      const topics = [TRANSFER_TOPIC, word(from), word(to), abi.encode(["uint256"], [tokenId]).slice(2)];
      return {
        ok: true,
        energy: ENERGY.trc721Transfer,
        result: "",
        logs: [logOf(contract, topics)],
        internals: [],
        movements: [{ kind: "trc721", via: "log", contract, from, to, amount: tokenId, logIndex: 0 }],
      };
    }
    if (state.created.has(contract) && selector === SELECTORS.payout) return runPayout(state, call);
  } catch {
    return REVERTED; // arguments that do not decode
  }
  return REVERTED;
}

function runTrc20(state: State, caller: string, selector: string, data: string): CallRun {
  const contract = TRC20.address;
  if (selector === SELECTORS.approve) {
    const [spenderArg, amount] = decodeArgs(["address", "uint256"], data) as [string, bigint];
    const spender = addressArg(spenderArg);
    state.allowances.set(`${caller}:${spender}`, amount);
    const log = logOf(
      contract,
      [APPROVAL_TOPIC, word(caller), word(spender)],
      abi.encode(["uint256"], [amount]).slice(2),
    );
    return {
      ok: true,
      energy: ENERGY.approve,
      result: TRUE_WORD,
      logs: [log],
      internals: [],
      movements: [{ kind: "approval", via: "log", contract, from: caller, to: spender, amount, logIndex: 0 }],
    };
  }
  if (selector === SELECTORS.transferFrom) {
    const [fromArg, toArg, amount] = decodeArgs(["address", "address", "uint256"], data) as [
      string,
      string,
      bigint,
    ];
    const [from, to] = [addressArg(fromArg), addressArg(toArg)];
    const key = `${from}:${caller}`;
    const allowed = state.allowances.get(key) ?? 0n;
    const held = state.trc20.get(from) ?? 0n;
    if (allowed < amount || held < amount) return REVERTED;
    state.allowances.set(key, allowed - amount);
    state.trc20.set(from, held - amount);
    state.trc20.set(to, (state.trc20.get(to) ?? 0n) + amount);
    return {
      ok: true,
      energy: ENERGY.transferFrom,
      result: TRUE_WORD,
      logs: [transferLog(contract, from, to, amount)],
      internals: [],
      movements: [{ kind: "trc20", via: "log", contract, from, to, amount, logIndex: 0 }],
    };
  }
  return REVERTED;
}

/** `payout(to[], amounts[], tokenIds[])`: the call value in, then one internal transfer per payment. */
function runPayout(state: State, call: CallInput): CallRun {
  const { contract, caller, callValue } = call;
  const [tos, amounts, tokenIds] = decodeArgs(["address[]", "uint256[]", "uint256[]"], call.data) as [
    string[],
    bigint[],
    bigint[],
  ];
  if (tos.length !== amounts.length || tos.length !== tokenIds.length) return REVERTED;
  const self = state.accounts.get(contract)!;
  const movements: Movement[] = [];
  if (callValue > 0n) {
    state.accounts.get(caller)!.balance -= callValue;
    self.balance += callValue;
    movements.push({ kind: "trx", via: "call_value", from: caller, to: contract, amount: callValue });
  }
  const internals: JsonObject[] = tos.map((toArg, i) => {
    const to = addressArg(toArg);
    const amount = amounts[i]!;
    const asset = tokenIds[i] === 0n ? undefined : String(tokenIds[i]);
    const recipient = state.accounts.get(to);
    const held = asset === undefined ? self.balance : (self.assets.get(asset) ?? 0n);
    // a send the contract cannot cover (or to an account that does not exist here) fails inside the call
    const rejected = held < amount || !recipient;
    if (!rejected) {
      if (asset === undefined) {
        self.balance -= amount;
        recipient.balance += amount;
      } else {
        self.assets.set(asset, held - amount);
        recipient.assets.set(asset, (recipient.assets.get(asset) ?? 0n) + amount);
      }
    }
    const base = { from: contract, to, amount, internalIndex: i, rejected };
    movements.push(
      asset === undefined
        ? { kind: "trx", via: "internal", ...base }
        : { kind: "trc10", via: "internal", asset, ...base },
    );
    const value: JsonObject =
      asset === undefined ? { callValue: Number(amount) } : { callValue: Number(amount), tokenId: asset };
    // java-tron's InternalTransaction, fields in number order; `rejected` left out when false
    return {
      hash: solidityPackedKeccak256(["bytes32", "uint32"], [`0x${call.txID}`, i]).slice(2),
      caller_address: contract,
      transferTo_address: to,
      callValueInfo: [value],
      note: CALL_NOTE,
      ...(rejected ? { rejected: true } : {}),
    };
  });
  return {
    ok: true,
    energy: ENERGY.payout + ENERGY.payoutPerTransfer * tos.length,
    result: "",
    logs: [],
    internals,
    movements,
  };
}

/**
 * The chain: blocks, their infos, the state after each block (so the solidified face reads the state at
 * the solidified block), a pool of broadcast transactions mined into the next block.
 */
export class TronScenario implements TronChainView {
  readonly chainId: string;
  readonly genesisBlockId: string;
  readonly blocks: StoredBlock[] = [];
  readonly pool: SignedTx[] = [];
  private readonly txIndex = new Map<string, number>();
  private branch = 0;

  constructor(
    readonly network: TronNetwork,
    public solidifyDepth: number,
  ) {
    this.chainId = CHAIN_ID[network];
    this.genesisBlockId = GENESIS_BLOCK_ID[network];
    this.blocks.push(this.genesis());
  }

  private genesis(): StoredBlock {
    const state: State = {
      accounts: new Map(),
      trc20: new Map(Object.entries(GENESIS_TRC20)),
      allowances: new Map(),
      trc721: new Map(GENESIS_TRC721),
      created: new Map(),
    };
    for (const [address, balance] of Object.entries(GENESIS_TRX)) {
      state.accounts.set(address, { balance, assets: new Map(), createTime: SCENARIO_GENESIS_MS });
    }
    for (const [address, assets] of Object.entries(GENESIS_TRC10)) {
      for (const [id, amount] of Object.entries(assets)) state.accounts.get(address)!.assets.set(id, amount);
    }
    const witness = SCENARIO_KEYS.witnesses[0]!;
    // Block 0 keeps the network's real genesis blockID (an identity check reads it); its header fields are
    // the stand-in's own (the real genesis header is not recorded here), so this id is not sha256 of them.
    return {
      number: 0,
      blockID: this.genesisBlockId,
      header: {
        raw_data: {
          number: 0,
          txTrieRoot: "0".repeat(64),
          witness_address: witness.hex,
          parentHash: "0".repeat(64),
          version: 0,
          timestamp: SCENARIO_GENESIS_MS,
        },
        witness_signature: "",
      },
      txs: [],
      infos: [],
      state,
    };
  }

  /** The next block's time when set by `skipTo` (ms), instead of the head's time plus one slot. */
  private nextTimestamp: number | undefined;

  /** Lets time pass: the next block is the first slot (3 s after genesis's time) at or after `ms`. */
  skipTo(ms: number): void {
    const after = this.head.header.raw_data.timestamp + BLOCK_INTERVAL_MS;
    const slots = Math.max(0, Math.ceil((ms - after) / BLOCK_INTERVAL_MS));
    this.nextTimestamp = after + slots * BLOCK_INTERVAL_MS;
  }

  get head(): StoredBlock {
    return this.blocks[this.blocks.length - 1]!;
  }
  headNumber(): number {
    return this.head.number;
  }
  solidifiedNumber(): number {
    return Math.max(0, this.head.number - this.solidifyDepth);
  }

  // ---- builders of scenario transactions (signed by the scenario's keys) ----

  /** ref_block of a new transaction: bytes 6..8 of the head's number, bytes 8..16 of its id (as java-tron). */
  refBlock(): { ref_block_bytes: Bytes; ref_block_hash: Bytes } {
    const id = hexToBytes(this.head.blockID);
    return { ref_block_bytes: id.subarray(6, 8), ref_block_hash: id.subarray(8, 16) };
  }

  unsigned(
    contract: ContractParameter,
    feeLimit?: bigint,
    // the time of the block it will be in (java-tron refuses a transaction past its expiration)
    nowMs = this.nextTimestamp ?? this.head.header.raw_data.timestamp,
  ): RawTransaction {
    const raw: RawTransaction = {
      ...this.refBlock(),
      expiration: BigInt(nowMs + 60_000),
      contract,
      timestamp: BigInt(nowMs),
    };
    if (feeLimit !== undefined) raw.fee_limit = feeLimit;
    return raw;
  }

  trx(from: TronKey, toHex41: string, amount: bigint): SignedTx {
    return signTransaction(
      this.unsigned({
        type: "TransferContract",
        value: { owner_address: hexToBytes(from.hex), to_address: hexToBytes(toHex41), amount },
      }),
      from,
    );
  }

  trc10(from: TronKey, toHex41: string, amount: bigint, assetId: string = TRC10.id): SignedTx {
    return signTransaction(
      this.unsigned({
        type: "TransferAssetContract",
        value: {
          asset_name: new TextEncoder().encode(assetId),
          owner_address: hexToBytes(from.hex),
          to_address: hexToBytes(toHex41),
          amount,
        },
      }),
      from,
    );
  }

  trc20Transfer(from: TronKey, toHex41: string, amount: bigint): SignedTx {
    return this.trigger(from, TRC20.address, callData("transfer", ["address", "uint256"], [toHex41, amount]));
  }

  /** TRC-20 `transferFrom(from, to, amount)` sent by `spender`: a Transfer log; the allowance goes down. */
  trc20TransferFrom(spender: TronKey, fromHex41: string, toHex41: string, amount: bigint): SignedTx {
    const data = callData("transferFrom", ["address", "address", "uint256"], [fromHex41, toHex41, amount]);
    return this.trigger(spender, TRC20.address, data);
  }

  /** TRC-20 `approve(spender, amount)`: an Approval log (3 topics, data = the amount). */
  trc20Approve(owner: TronKey, spenderHex41: string, amount: bigint): SignedTx {
    return this.trigger(
      owner,
      TRC20.address,
      callData("approve", ["address", "uint256"], [spenderHex41, amount]),
    );
  }

  /** TRC-721 `transferFrom(from, to, tokenId)` by the token's owner: a Transfer log with 4 topics. */
  trc721Transfer(from: TronKey, toHex41: string, tokenId: bigint): SignedTx {
    const data = callData("transferFrom", ["address", "address", "uint256"], [from.hex, toHex41, tokenId]);
    return this.trigger(from, TRC721.address, data);
  }

  /**
   * A CreateSmartContract by `owner`: the scenario's payout contract (its address is
   * `createdContractAddress(tx)`, the info's `contract_address`).
   */
  deploy(owner: TronKey, name = "Payout", bytecode = PAYOUT_BYTECODE): SignedTx {
    return signTransaction(
      this.unsigned(
        {
          type: "CreateSmartContract",
          value: {
            owner_address: hexToBytes(owner.hex),
            new_contract: {
              origin_address: hexToBytes(owner.hex),
              bytecode: hexToBytes(bytecode),
              consume_user_resource_percent: 100n,
              name,
              origin_energy_limit: 10_000_000n,
            },
          },
        },
        1_000_000_000n,
      ),
      owner,
    );
  }

  /**
   * A call of a created payout contract's `payout(address[] to, uint256[] amounts, uint256[] tokenIds)`
   * sending `callValue` sun with it: each payment (token id 0 = TRX, else a TRC-10 id) is an internal
   * transaction from the contract, `rejected` when the contract holds too little at that point.
   */
  payout(
    from: TronKey,
    contractHex41: string,
    payments: { to: string; amount: bigint; tokenId?: string }[],
    callValue = 0n,
  ): SignedTx {
    const data = callData(
      "payout",
      ["address[]", "uint256[]", "uint256[]"],
      [payments.map((p) => p.to), payments.map((p) => p.amount), payments.map((p) => BigInt(p.tokenId ?? 0))],
    );
    return this.trigger(from, contractHex41, data, callValue);
  }

  /** A TriggerSmartContract of `data` (hex, no 0x) with `callValue` sun; an unknown function reverts. */
  trigger(from: TronKey, contractHex41: string, data: string, callValue = 0n): SignedTx {
    return signTransaction(
      this.unsigned(
        {
          type: "TriggerSmartContract",
          value: {
            owner_address: hexToBytes(from.hex),
            contract_address: hexToBytes(contractHex41),
            call_value: callValue,
            data: hexToBytes(data),
          },
        },
        100_000_000n,
      ),
      from,
    );
  }

  // ---- validation (broadcast) and execution (mining) ----

  /** What java-tron's broadcast refuses before the pool: signature, TaPoS, duplicates, balances. */
  validate(tx: SignedTx): Refusal | undefined {
    if (this.txIndex.has(tx.txID) || this.pool.some((p) => p.txID === tx.txID)) {
      return { code: "DUP_TRANSACTION_ERROR", message: "Dup transaction." };
    }
    const owner = bytesToHex(tx.raw.contract.value.owner_address);
    const signer = tx.signatures[0] && recoverAddress(hexToBytes(tx.txID), tx.signatures[0]);
    if (signer !== owner) return { code: "SIGERROR", message: "validate signature error" };
    const ref = bytesToHex(tx.raw.ref_block_bytes) + bytesToHex(tx.raw.ref_block_hash);
    const known = this.blocks.some((b) => {
      const id = hexToBytes(b.blockID);
      return bytesToHex(id.subarray(6, 8)) + bytesToHex(id.subarray(8, 16)) === ref;
    });
    if (!known) return { code: "TAPOS_ERROR", message: "Tapos failed" };
    const state = this.head.state;
    const account = state.accounts.get(owner);
    const c = tx.raw.contract;
    if (!account) {
      return { code: "CONTRACT_VALIDATE_ERROR", message: `Validate ${c.type} error, no OwnerAccount.` };
    }
    if (c.type === "TransferContract") {
      if (c.value.amount <= 0n)
        return { code: "CONTRACT_VALIDATE_ERROR", message: "Amount must be greater than 0." };
      if (account.balance < c.value.amount) {
        return {
          code: "CONTRACT_VALIDATE_ERROR",
          message: "Validate TransferContract error, balance is not sufficient.",
        };
      }
    }
    if (c.type === "TransferAssetContract") {
      const held = account.assets.get(new TextDecoder().decode(c.value.asset_name)) ?? 0n;
      if (held < c.value.amount)
        return { code: "CONTRACT_VALIDATE_ERROR", message: "assetBalance is not sufficient." };
    }
    return undefined;
  }

  private account(state: State, hex: string, time: number): { account: Account; created: boolean } {
    const found = state.accounts.get(hex);
    if (found) return { account: found, created: false };
    const account: Account = { balance: 0n, assets: new Map(), createTime: time };
    state.accounts.set(hex, account);
    return { account, created: true };
  }

  /** Runs one transaction on `state`; its ret, its info (blockNumber/time filled by the caller), its movements. */
  private execute(state: State, tx: SignedTx, time: number): Executed | undefined {
    const netUsage = tx.rawBytes.length + SIGNATURE_BYTES * tx.signatures.length + 64;
    const c = tx.raw.contract;
    const from = bytesToHex(c.value.owner_address);
    const owner = state.accounts.get(from);
    if (!owner) return undefined;
    owner.lastOperation = time;
    if (c.type === "TransferContract" || c.type === "TransferAssetContract") {
      const toHex = bytesToHex(c.value.to_address);
      const to = this.account(state, toHex, time);
      const fee = to.created ? CREATE_ACCOUNT_FEE_SUN + NEW_ACCOUNT_NET_FEE_SUN : 0n;
      let movement: Movement;
      if (c.type === "TransferContract") {
        if (owner.balance < c.value.amount + fee) return undefined;
        owner.balance -= c.value.amount + fee;
        to.account.balance += c.value.amount;
        movement = { kind: "trx", via: "transfer", from, to: toHex, amount: c.value.amount };
      } else {
        const asset = new TextDecoder().decode(c.value.asset_name);
        const held = owner.assets.get(asset) ?? 0n;
        if (held < c.value.amount || owner.balance < fee) return undefined;
        owner.assets.set(asset, held - c.value.amount);
        owner.balance -= fee;
        to.account.assets.set(asset, (to.account.assets.get(asset) ?? 0n) + c.value.amount);
        movement = { kind: "trc10", via: "transfer", from, to: toHex, amount: c.value.amount, asset };
      }
      // as recorded (mainnet/transactioninfos.json): a new account's transfer burns 1.1 TRX, others use bandwidth
      const info =
        fee > 0n
          ? {
              id: tx.txID,
              fee: Number(fee),
              contractResult: [""],
              receipt: { net_fee: Number(NEW_ACCOUNT_NET_FEE_SUN) },
            }
          : { id: tx.txID, contractResult: [""], receipt: { net_usage: netUsage } };
      return { contractRet: "SUCCESS", info, movements: [movement] };
    }
    if (c.type === "CreateSmartContract") return this.executeCreate(state, tx, owner, netUsage, time);
    const contract = bytesToHex(c.value.contract_address);
    const data = bytesToHex(c.value.data ?? new Uint8Array());
    if (contract === TRC20.address && data.startsWith(SELECTORS.transfer) && !c.value.call_value) {
      return this.executeTrc20Transfer(state, tx, owner, netUsage);
    }
    return this.executeTrigger(state, tx, netUsage, time);
  }

  private executeCreate(state: State, tx: SignedTx, owner: Account, netUsage: number, time: number) {
    const c = tx.raw.contract;
    if (c.type !== "CreateSmartContract") return undefined;
    const energyFee = ENERGY.create * ENERGY_PRICE_SUN;
    if (owner.balance < BigInt(energyFee)) return undefined;
    owner.balance -= BigInt(energyFee);
    const address = createdContractAddress(tx);
    const from = bytesToHex(c.value.owner_address);
    this.account(state, address, time);
    state.created.set(address, {
      name: c.value.new_contract.name ?? "",
      bytecode: bytesToHex(c.value.new_contract.bytecode),
      origin: from,
    });
    return {
      contractRet: "SUCCESS",
      info: {
        id: tx.txID,
        fee: energyFee,
        contractResult: [""],
        contract_address: address,
        receipt: {
          energy_fee: energyFee,
          energy_usage_total: ENERGY.create,
          net_usage: netUsage,
          result: "SUCCESS",
        },
      },
      movements: [{ kind: "create", via: "create", from, to: address, amount: 0n } as Movement],
    };
  }

  /** Part 1's USDT `transfer`, in the recorded mainnet form (its own energy, the dynamic penalty). */
  private executeTrc20Transfer(
    state: State,
    tx: SignedTx,
    owner: Account,
    netUsage: number,
  ): Executed | undefined {
    const c = tx.raw.contract;
    if (c.type !== "TriggerSmartContract") return undefined;
    const contract = bytesToHex(c.value.contract_address);
    const data = bytesToHex(c.value.data ?? new Uint8Array());
    const [to, amount] = abi.decode(["address", "uint256"], `0x${data.slice(8)}`) as unknown as [
      string,
      bigint,
    ];
    const from = bytesToHex(c.value.owner_address);
    const toHex = `41${to.slice(2).toLowerCase()}`;
    const held = state.trc20.get(from) ?? 0n;
    const ok = held >= amount;
    const energy = ok ? TRC20_TRANSFER_ENERGY : TRC20_REVERT_ENERGY;
    const energyFee = (energy - (ok ? SENDER_OWN_ENERGY : 0)) * ENERGY_PRICE_SUN;
    if (owner.balance < BigInt(energyFee)) return undefined;
    owner.balance -= BigInt(energyFee);
    // members in java-tron's ResourceReceipt order (mainnet/transactioninfos.json)
    const receipt: TronReceiptJson = ok
      ? {
          energy_usage: SENDER_OWN_ENERGY,
          energy_fee: energyFee,
          energy_usage_total: energy,
          net_usage: netUsage,
          result: "SUCCESS",
          energy_penalty_total: TRC20_TRANSFER_PENALTY,
        }
      : { energy_fee: energyFee, energy_usage_total: energy, net_usage: netUsage, result: "REVERT" };
    if (!ok) {
      const reason = abi.encode(["string"], ["ERC20: transfer amount exceeds balance"]).slice(2);
      return {
        contractRet: "REVERT",
        info: {
          id: tx.txID,
          fee: energyFee,
          contractResult: [`08c379a0${reason}`],
          contract_address: contract,
          receipt,
          result: "FAILED" as const,
          resMessage: REVERT_MESSAGE,
        },
        movements: [],
      };
    }
    state.trc20.set(from, held - amount);
    state.trc20.set(toHex, (state.trc20.get(toHex) ?? 0n) + amount);
    return {
      contractRet: "SUCCESS",
      info: {
        id: tx.txID,
        fee: energyFee,
        contractResult: [TRUE_WORD],
        contract_address: contract,
        receipt,
        log: [transferLog(contract, from, toHex, amount)],
      },
      movements: [{ kind: "trc20", via: "log", contract, from, to: toHex, amount, logIndex: 0 }],
    };
  }

  /**
   * Part 2's calls (TRC-20 transferFrom/approve, TRC-721 transferFrom, a created contract's payout, anything
   * else reverts), run on a copy of the state that replaces it when the call succeeds. All their energy is
   * burned, in the receipt form of privnet/gettransactioninfobyid-internal.json.
   */
  private executeTrigger(state: State, tx: SignedTx, netUsage: number, time: number): Executed | undefined {
    const c = tx.raw.contract;
    if (c.type !== "TriggerSmartContract") return undefined;
    const contract = bytesToHex(c.value.contract_address);
    const from = bytesToHex(c.value.owner_address);
    const known = contract === TRC20.address || contract === TRC721.address || state.created.has(contract);
    if (!known) return undefined; // java-tron refuses a call to no contract before the block
    const scratch = cloneState(state);
    const run = runCall(scratch, {
      contract,
      caller: from,
      data: bytesToHex(c.value.data ?? new Uint8Array()),
      callValue: c.value.call_value ?? 0n,
      txID: tx.txID,
      time,
    });
    if (!run) return undefined;
    const energyFee = run.energy * ENERGY_PRICE_SUN;
    if ((run.ok ? scratch : state).accounts.get(from)!.balance < BigInt(energyFee)) return undefined;
    if (run.ok) Object.assign(state, scratch);
    state.accounts.get(from)!.balance -= BigInt(energyFee);
    const receipt: TronReceiptJson = {
      energy_fee: energyFee,
      energy_usage_total: run.energy,
      net_usage: netUsage,
      result: run.ok ? "SUCCESS" : "REVERT",
    };
    const base = {
      id: tx.txID,
      fee: energyFee,
      contractResult: [run.result],
      contract_address: contract,
      receipt,
    };
    if (!run.ok) {
      return {
        contractRet: "REVERT",
        info: { ...base, result: "FAILED" as const, resMessage: REVERT_MESSAGE },
        movements: [],
      };
    }
    return {
      contractRet: "SUCCESS",
      info: {
        ...base,
        ...(run.logs.length > 0 ? { log: run.logs } : {}),
        ...(run.internals.length > 0 ? { internal_transactions: run.internals } : {}),
      },
      movements: run.movements,
    };
  }

  // ---- mining, reorgs ----

  /** Mines `count` blocks; the first takes the pool and `txs` (transactions that fail to run are dropped). */
  mine(count = 1, txs: SignedTx[] = []): TronBlockJson[] {
    const mined: TronBlockJson[] = [];
    for (let i = 0; i < count; i++) {
      const take = i === 0 ? [...this.pool.splice(0), ...txs] : [];
      mined.push(this.produce(take));
    }
    return mined;
  }

  private produce(candidates: SignedTx[]): TronBlockJson {
    const parent = this.head;
    const number = parent.number + 1;
    const timestamp = this.nextTimestamp ?? parent.header.raw_data.timestamp + BLOCK_INTERVAL_MS;
    this.nextTimestamp = undefined;
    const state = cloneState(parent.state);
    const stored: StoredTx[] = [];
    const infos: TronTransactionInfoJson[] = [];
    for (const tx of candidates) {
      const done = this.execute(state, tx, timestamp);
      if (!done) continue;
      const { receipt } = done.info;
      const outcome: Outcome = {
        fee: BigInt(done.info.fee ?? 0),
        energy: receipt.energy_usage_total ?? 0,
        bandwidth: receipt.net_usage ?? 0,
        movements: done.movements,
      };
      stored.push({ ...tx, contractRet: done.contractRet, outcome });
      const { id, ...rest } = done.info;
      infos.push({
        id,
        ...pick(rest, "fee"),
        blockNumber: number,
        blockTimeStamp: timestamp,
        ...omit(rest, "fee"),
      });
    }
    const witness = SCENARIO_KEYS.witnesses[(number + this.branch) % SCENARIO_KEYS.witnesses.length]!;
    const raw = {
      timestamp: BigInt(timestamp),
      txTrieRoot: txTrieRoot(stored),
      parentHash: hexToBytes(parent.blockID),
      number: BigInt(number),
      witness_address: hexToBytes(witness.hex),
      version: BLOCK_VERSION,
    };
    const rawBytes = encodeBlockHeaderRaw(raw);
    const digest = sha256Bytes(rawBytes);
    const blockID = number.toString(16).padStart(16, "0") + bytesToHex(digest.subarray(8));
    const header: TronBlockHeaderJson = {
      raw_data: {
        number,
        txTrieRoot: bytesToHex(raw.txTrieRoot),
        witness_address: witness.hex,
        parentHash: parent.blockID,
        version: BLOCK_VERSION,
        timestamp,
      },
      witness_signature: bytesToHex(signDigest(digest, witness.privateKey)),
    };
    const block: StoredBlock = { number, blockID, header, txs: stored, infos, state };
    this.blocks.push(block);
    for (const tx of stored) this.txIndex.set(tx.txID, number);
    return this.renderBlock(block, false, true) as unknown as TronBlockJson;
  }

  /**
   * Drops the top `depth` blocks and mines `depth + 1` blocks of another branch in their place (its first
   * block holds `replacement`), as java-tron switches to a longer fork. Solidified blocks never reorg.
   * `replacement` may be a function of the chain cut back to the fork point, so its transactions are built
   * (ref_block, times) on the branch that keeps them. The dropped transactions are not put back in the pool:
   * they are gone from every face (a test that wants them again passes them in `replacement`).
   */
  reorg(
    depth: number,
    replacement: SignedTx[] | ((chain: TronScenario) => SignedTx[]) = [],
  ): { dropped: string[]; added: string[] } {
    if (depth < 1 || this.head.number - depth < this.solidifiedNumber()) {
      throw new Error(`a reorg of ${depth} would undo solidified block ${this.solidifiedNumber()}`);
    }
    const gone = this.blocks.splice(this.blocks.length - depth, depth);
    const dropped = gone.flatMap((b) => b.txs.map((t) => t.txID));
    for (const txID of dropped) this.txIndex.delete(txID);
    this.branch++;
    this.nextTimestamp = undefined;
    const txs = typeof replacement === "function" ? replacement(this) : replacement;
    const [first] = this.mine(depth + 1, txs);
    return { dropped, added: first?.transactions?.map((t) => t.txID) ?? [] };
  }

  // ---- reads ----

  stored(n: number): StoredBlock | undefined {
    return Number.isSafeInteger(n) && n >= 0 ? this.blocks[n] : undefined;
  }
  storedById(id: string): StoredBlock | undefined {
    if (!/^[0-9a-f]{64}$/.test(id)) return undefined;
    const block = this.stored(Number.parseInt(id.slice(0, 16), 16));
    return block?.blockID === id ? block : undefined;
  }

  renderBlock(block: StoredBlock, visible: boolean, detail: boolean): JsonObject {
    const { raw_data } = block.header;
    const out: JsonObject = {
      blockID: block.blockID,
      block_header: {
        raw_data: {
          number: raw_data.number,
          txTrieRoot: raw_data.txTrieRoot,
          witness_address: addressOut(raw_data.witness_address, visible),
          parentHash: raw_data.parentHash,
          // java-tron leaves a zero version and number out, as every default (block 0 has both).
          ...(raw_data.version ? { version: raw_data.version } : {}),
          timestamp: raw_data.timestamp,
        },
        ...(block.header.witness_signature ? { witness_signature: block.header.witness_signature } : {}),
      },
    };
    if (raw_data.number === 0) delete (out.block_header as { raw_data: JsonObject }).raw_data.number;
    if (detail && block.txs.length > 0)
      out.transactions = block.txs.map((t) => renderTransaction(t, visible));
    return out;
  }

  block(n: number): TronBlockJson | undefined {
    const b = this.stored(n);
    return b && (this.renderBlock(b, false, true) as unknown as TronBlockJson);
  }
  blockById(id: string): TronBlockJson | undefined {
    const b = this.storedById(id);
    return b && (this.renderBlock(b, false, true) as unknown as TronBlockJson);
  }
  infos(n: number): TronTransactionInfoJson[] | undefined {
    return this.stored(n)?.infos;
  }
  findTx(txID: string): { tx: StoredTx; block: StoredBlock; info: TronTransactionInfoJson } | undefined {
    const n = this.txIndex.get(txID);
    const block = n === undefined ? undefined : this.blocks[n];
    const i = block?.txs.findIndex((t) => t.txID === txID) ?? -1;
    return block && i >= 0 ? { tx: block.txs[i]!, block, info: block.infos[i]! } : undefined;
  }
  transaction(txID: string): { tx: TronTransactionJson; blockNumber: number } | undefined {
    const found = this.findTx(txID);
    return (
      found && {
        tx: renderTransaction(found.tx, false) as unknown as TronTransactionJson,
        blockNumber: found.block.number,
      }
    );
  }
  info(txID: string): TronTransactionInfoJson | undefined {
    return this.findTx(txID)?.info;
  }
  stateAt(n = this.head.number): State {
    return (this.blocks[Math.min(n, this.head.number)] ?? this.head).state;
  }
  balance(addressHex41: string, atBlock?: number): bigint {
    return this.stateAt(atBlock).accounts.get(addressHex41)?.balance ?? 0n;
  }
  accountAt(addressHex41: string, atBlock?: number): Account | undefined {
    return this.stateAt(atBlock).accounts.get(addressHex41);
  }

  /** Whether a contract is at `addressHex41` at block `atBlock` (the genesis TRC-20 and TRC-721, created ones). */
  isContract(addressHex41: string, atBlock?: number): boolean {
    return (
      addressHex41 === TRC20.address ||
      addressHex41 === TRC721.address ||
      this.stateAt(atBlock).created.has(addressHex41)
    );
  }
  /** Runtime code (hex) at an address, or undefined. */
  codeOf(addressHex41: string): string | undefined {
    if (addressHex41 === TRC20.address) return TRC20_BYTECODE;
    if (addressHex41 === TRC721.address) return TRC721_BYTECODE;
    return this.stateAt().created.get(addressHex41)?.bytecode;
  }

  call(contractHex41: string, data: string, atBlock?: number): { ok: boolean; result: string } | undefined {
    if (contractHex41 === TRC721.address) return trc721Call(this.stateAt(atBlock), data);
    if (contractHex41 !== TRC20.address) return undefined;
    const state = this.stateAt(atBlock);
    const selector = data.slice(0, 8);
    const encode = (types: string[], values: unknown[]) => abi.encode(types, values).slice(2);
    switch (selector) {
      case SELECTORS.balanceOf: {
        if (data.length < 8 + 64) return { ok: false, result: "" };
        const owner = `41${data.slice(8 + 24, 8 + 64)}`;
        return { ok: true, result: encode(["uint256"], [state.trc20.get(owner) ?? 0n]) };
      }
      case SELECTORS.allowance: {
        if (data.length < 8 + 128) return { ok: false, result: "" };
        const key = `41${data.slice(8 + 24, 8 + 64)}:41${data.slice(8 + 88, 8 + 128)}`;
        return { ok: true, result: encode(["uint256"], [state.allowances.get(key) ?? 0n]) };
      }
      case SELECTORS.decimals:
        return { ok: true, result: encode(["uint8"], [TRC20.decimals]) };
      case SELECTORS.symbol:
        return { ok: true, result: encode(["string"], [TRC20.symbol]) };
      case SELECTORS.name:
        return { ok: true, result: encode(["string"], [TRC20.name]) };
      case SELECTORS.totalSupply:
        return {
          ok: true,
          result: encode(["uint256"], [[...state.trc20.values()].reduce((a, b) => a + b, 0n)]),
        };
      default:
        return { ok: false, result: "" };
    }
  }
}

function trc721Call(state: State, data: string): { ok: boolean; result: string } {
  const encode = (types: string[], values: unknown[]) => abi.encode(types, values).slice(2);
  const arg = data.slice(8, 8 + 64);
  switch (data.slice(0, 8)) {
    case SELECTORS.balanceOf: {
      const owner = `41${arg.slice(24)}`;
      const count = [...state.trc721.values()].filter((o) => o === owner).length;
      return arg.length === 64
        ? { ok: true, result: encode(["uint256"], [count]) }
        : { ok: false, result: "" };
    }
    case SELECTORS.ownerOf: {
      const owner = arg.length === 64 ? state.trc721.get(BigInt(`0x${arg}`)) : undefined;
      return owner ? { ok: true, result: word(owner) } : { ok: false, result: "" };
    }
    case SELECTORS.name:
      return { ok: true, result: encode(["string"], [TRC721.name]) };
    case SELECTORS.symbol:
      return { ok: true, result: encode(["string"], [TRC721.symbol]) };
    default:
      return { ok: false, result: "" };
  }
}

function pick<T extends object, K extends keyof T>(o: T, k: K): Partial<Pick<T, K>> {
  return o[k] === undefined ? {} : ({ [k]: o[k] } as Partial<Pick<T, K>>);
}
function omit<T extends object, K extends keyof T>(o: T, k: K): Omit<T, K> {
  const { [k]: _, ...rest } = o;
  return rest;
}

/** The contract's ABI in java-tron's `getcontract` form (`entrys`, `Function`, `View`). */
export const TRC20_ABI_ENTRYS: JsonObject[] = [
  ...(["name", "symbol"] as const).map((name) => ({
    outputs: [{ type: "string" }],
    constant: true,
    name,
    stateMutability: "View",
    type: "Function",
  })),
  {
    outputs: [{ type: "uint8" }],
    constant: true,
    name: "decimals",
    stateMutability: "View",
    type: "Function",
  },
  {
    outputs: [{ type: "uint256" }],
    constant: true,
    name: "totalSupply",
    stateMutability: "View",
    type: "Function",
  },
  {
    outputs: [{ type: "uint256" }],
    constant: true,
    inputs: [{ name: "who", type: "address" }],
    name: "balanceOf",
    stateMutability: "View",
    type: "Function",
  },
  {
    outputs: [{ type: "bool" }],
    inputs: [
      { name: "_to", type: "address" },
      { name: "_value", type: "uint256" },
    ],
    name: "transfer",
    stateMutability: "Nonpayable",
    type: "Function",
  },
  {
    inputs: [
      { indexed: true, name: "from", type: "address" },
      { indexed: true, name: "to", type: "address" },
      { name: "value", type: "uint256" },
    ],
    name: "Transfer",
    type: "Event",
  },
];
/** Stand-in bytecode: no EVM runs here; the contract's answers are computed (see TronScenario.call). */
export const TRC20_BYTECODE = "6080604052348015600f57600080fd5b50";
export const TRC20_CODE_HASH = keccak256(`0x${TRC20_BYTECODE}`).slice(2);
export const TRC721_BYTECODE = "6080604052348015600f57600080fd5b5060aa";
