/**
 * A local dev chain: anvil from the @foundry-rs/anvil npm package, on a free loopback port. The service
 * starts one when UPSTREAM_URLS is unset (its state kept under DATA_DIR), seeded with a few transfers on its
 * first start so the README's examples have something to show; the tests start their own.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "../../log";
import { startLocalProcess } from "../localProcess";
import { DEV_TOKEN_CREATION_CODE } from "./devToken";

const START_TIMEOUT_MS = 20_000;
const POLL_MS = 50;
const STOP_TIMEOUT_MS = 5_000;
/** How long a seed transaction may take to be mined (anvil mines each at once). */
const SEED_MINE_TIMEOUT_MS = 10_000;
/** How often anvil writes its state file, so a killed process loses at most this much chain. */
const STATE_INTERVAL_S = 5;

export interface DevChain {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** The real anvil binary (not the Node wrapper, which adds a process and a startup cost). */
export function anvilBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), "bin", "anvil");
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      signal: AbortSignal.timeout(1_000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

export async function startAnvil(
  options: { stateFile?: string; args?: string[]; log?: Logger } = {},
): Promise<DevChain> {
  const { stateFile, log } = options;
  if (stateFile) mkdirSync(dirname(stateFile), { recursive: true });
  const anvil = await startLocalProcess({
    name: "anvil",
    binary: anvilBinary(),
    args: (port) => [
      ...["--host", "127.0.0.1", "--port", String(port), "--quiet"],
      ...(stateFile ? ["--state", stateFile, "--state-interval", String(STATE_INTERVAL_S)] : []),
      ...(options.args ?? []),
    ],
    ready: (port) => answers(`http://127.0.0.1:${port}`),
    // An anvil left behind by a killed service would keep overwriting the same state file.
    pidFile: stateFile ? `${stateFile}.pid` : undefined,
    startTimeoutMs: START_TIMEOUT_MS,
    pollMs: POLL_MS,
    // SIGINT lets anvil write its state file before it exits.
    stopSignal: "SIGINT",
    stopTimeoutMs: STOP_TIMEOUT_MS,
  });
  const url = `http://127.0.0.1:${anvil.port}`;
  log?.info("dev chain started", { url, pid: anvil.pid, stateFile });
  return { url, port: anvil.port, pid: anvil.pid, stop: anvil.stop };
}

/**
 * anvil's first dev accounts (its default mnemonic). The node holds their keys and signs for them, so the
 * seed needs no key of its own.
 */
export const DEV_ACCOUNTS = [
  "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
] as const;

/** A transaction of the seed: every field fixed, so signed the same on every fresh chain. */
export interface SeedTransaction {
  from: string;
  /** null: a contract creation. */
  to: string | null;
  /** wei */
  value: bigint;
  nonce: number;
  gas: bigint;
  data?: string;
  /** Its hash: the same on every fresh chain, the signature being deterministic (RFC 6979). */
  hash: string;
}

const [ACCOUNT_0, ACCOUNT_1, ACCOUNT_2] = DEV_ACCOUNTS;
/** A fixed fee cap and tip, so the signed transactions, and so their hashes, never depend on the base fee. */
const SEED_MAX_FEE_WEI = 2_000_000_000n;
const SEED_TIP_WEI = 1_000_000_000n;
const TRANSFER_GAS = 21_000n;
/** Above what DevToken's creation and a transfer of it use (264,816 and 51,514 on anvil). */
const TOKEN_CREATION_GAS = 400_000n;
const TOKEN_TRANSFER_GAS = 80_000n;
const ANVIL_CHAIN_ID = 31_337n;
const TOKEN_UNIT = 10n ** 18n;
/** DevToken's whole supply, minted to account 0 as it is made. */
const DEV_TOKEN_SUPPLY = 1_000_000n * TOKEN_UNIT;
/** Where account 0's third transaction (nonce 2) puts DevToken. */
export const DEV_TOKEN = "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0";
const ERC20_TRANSFER = "0xa9059cbb";
const word = (n: bigint | string) => (typeof n === "string" ? n.slice(2) : n.toString(16)).padStart(64, "0");

/**
 * What a fresh dev chain is given, one block each: native transfers between anvil's accounts, then a token
 * (its supply minted to account 0) and a transfer of it. The first carries more wei than 2^53, with digits a
 * float cannot hold (the README's big-integer note reads it).
 */
export const DEV_SEED: readonly SeedTransaction[] = [
  {
    from: ACCOUNT_0,
    to: ACCOUNT_1,
    value: 1_234_567_890_123_456_789n,
    nonce: 0,
    gas: TRANSFER_GAS,
    hash: "0xdca15b010335c974bb58435119150a19e6a87a04c29b1bfec0748c81c4a1fba8",
  },
  {
    from: ACCOUNT_1,
    to: ACCOUNT_0,
    value: 500_000_000_000_000_000n,
    nonce: 0,
    gas: TRANSFER_GAS,
    hash: "0x9b0813de497a358abf2460fd04e6a5db4a7fb53b97a69d8f1e9b970c52b13c96",
  },
  {
    from: ACCOUNT_0,
    to: ACCOUNT_2,
    value: 2_000_000_000_000_000_000n,
    nonce: 1,
    gas: TRANSFER_GAS,
    hash: "0xf721df79c0e70f49e2c4a16fd70e6aaf72f79ae378dbfdb0aaf7a473c25ca5d6",
  },
  {
    from: ACCOUNT_0,
    to: null,
    value: 0n,
    nonce: 2,
    gas: TOKEN_CREATION_GAS,
    data: `${DEV_TOKEN_CREATION_CODE}${word(DEV_TOKEN_SUPPLY)}`,
    hash: "0x0f52d0cc141b3e24702a16f000fd87b2bc059d10a49b60755dcc2ad5ad793498",
  },
  {
    from: ACCOUNT_0,
    to: DEV_TOKEN,
    value: 0n,
    nonce: 3,
    gas: TOKEN_TRANSFER_GAS,
    // 1,234.5 DEV to account 1
    data: `${ERC20_TRANSFER}${word(ACCOUNT_1)}${word((12_345n * TOKEN_UNIT) / 10n)}`,
    hash: "0xcc106a9e34743e53f67d4cdd83996bf480306b634f25d61104748cb3a0bb4d6e",
  },
];

const hex = (n: bigint | number) => `0x${n.toString(16)}`;

async function devCall(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(SEED_MINE_TIMEOUT_MS),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/**
 * Sends DEV_SEED through the node's own signer (anvil's unlocked accounts, reached here directly, never
 * through the service) and waits until each is mined, so the chain the service starts on already holds it.
 */
export async function seedDevChain(url: string, log?: Logger): Promise<void> {
  for (const tx of DEV_SEED) {
    const hash = await devCall(url, "eth_sendTransaction", [
      {
        from: tx.from,
        ...(tx.to ? { to: tx.to } : {}),
        value: hex(tx.value),
        nonce: hex(tx.nonce),
        gas: hex(tx.gas),
        ...(tx.data ? { data: tx.data } : {}),
        maxFeePerGas: hex(SEED_MAX_FEE_WEI),
        maxPriorityFeePerGas: hex(SEED_TIP_WEI),
        chainId: hex(ANVIL_CHAIN_ID),
        type: "0x2",
      },
    ]);
    const deadline = Date.now() + SEED_MINE_TIMEOUT_MS;
    while (!(await devCall(url, "eth_getTransactionReceipt", [hash]))) {
      if (Date.now() > deadline) throw new Error(`the dev chain did not mine its seed transaction ${hash}`);
      await Bun.sleep(POLL_MS);
    }
  }
  log?.info("dev chain seeded", {
    transactions: DEV_SEED.length,
    first: DEV_SEED[0]!.hash,
    token: DEV_TOKEN,
  });
}
