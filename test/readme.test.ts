/**
 * The README run as a user would: its first command (with a temporary DATA_DIR and a free port) brings up a
 * service on its embedded defaults (a seeded dev chain + embedded PostgreSQL); then every example of its
 * Examples section runs verbatim against it (the port 8000 they name replaced by the test's, nothing else):
 * the curl commands through bash, the WebSocket module under Node and Bun, the raw WebSocket messages, and
 * the big-integer snippet under Bun and Node 20. Each answer is checked exactly where the seed makes it
 * deterministic.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HDNodeWallet } from "ethers";
import { DEV_ACCOUNTS, DEV_SEED, DEV_TOKEN, type SeedTransaction } from "../src/families/evm/devChain";
import { ANVIL_MNEMONIC } from "./support/chain";
import { freePort, post } from "./support/service";
import { until } from "./support/until";
import { connectSocket } from "./support/ws";

const ROOT = join(import.meta.dir, "..");
const START_TIMEOUT_MS = 150_000;
const SCRIPT_TIMEOUT_MS = 60_000;
/** How long a WebSocket example may take to print the blocks the test makes. */
const WS_EXAMPLE_TIMEOUT_MS = 30_000;
const STOP_WAIT_MS = 15_000;
/** The blocks the seed makes: one a transaction, from 1. */
const SEED_HEAD = DEV_SEED.length;
const TRANSFER_GAS = 21_000n;
/** The fee cap and tip of the seed's transactions (devChain.ts). */
const SEED_MAX_FEE_WEI = 2_000_000_000n;
const SEED_TIP_WEI = 1_000_000_000n;
/** anvil's dev accounts start with 10,000 ETH. */
const START_BALANCE_WEI = 10_000n * 10n ** 18n;
/** A mined block's transactions are priced at most at this cap (anvil's base fee falls on an idle chain). */
const SENT_MAX_FEE_WEI = 2_000_000_000n;

/** The first Node whose JSON.parse hands revivers the source text without a flag. */
const NODE_WITH_SOURCE_TEXT = 21;

const nodeMajor = () =>
  Number(Bun.spawnSync(["node", "-p", "process.versions.node.split('.')[0]"]).stdout.toString());

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

function readmeCommands(): string[] {
  return [...readme.matchAll(/```sh\n([^`]+?)\n```/g)].map((m) => m[1]!.trim());
}

/** A section of the README, from its heading to the next heading of the same or a higher level (not in code). */
function section(heading: string): string {
  const level = heading.match(/^#+/)![0].length;
  const lines = readme.split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`the README has no ${heading}`);
  let inCode = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end]!;
    if (line.startsWith("```")) inCode = !inCode;
    const hashes = /^(#+) /.exec(line)?.[1]?.length;
    if (!inCode && hashes !== undefined && hashes <= level) break;
  }
  return lines.slice(start + 1, end).join("\n");
}

function blocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]+?)\\n\`\`\``, "g"))].map((m) => m[1]!);
}

const examples = section("## Examples");

let port = 0;
let base = "";
let dataDir = "";
let child: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  const [start] = readmeCommands();
  dataDir = mkdtempSync(join(tmpdir(), "cg-readme-"));
  port = freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    PORT: String(port),
  };
  for (const name of ["UPSTREAM_URLS", "DATABASE_URL", "API_KEYS"]) delete env[name];
  child = spawn("bash", ["-c", start!], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      // A user waits a moment after the start, until the index holds the seeded blocks.
      const health = (await (await fetch(`${base}/health`)).json()) as any;
      if (health.indexer?.lastBlockNumber === SEED_HEAD) return;
    } catch {}
    await Bun.sleep(250);
  }
  throw new Error(`the service did not come up with its index at the head:\n${output.slice(-3000)}`);
}, START_TIMEOUT_MS + 10_000);

afterAll(async () => {
  if (child?.pid) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      await Promise.race([exited, Bun.sleep(STOP_WAIT_MS)]);
    }
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, STOP_WAIT_MS + 5_000);

/** The README names port 8000; the test's service listens elsewhere. Nothing else is changed. */
const onTestPort = (text: string) => text.replace(/\b(localhost|127\.0\.0\.1):8000\b/g, `$1:${port}`);

test("the README's first two commands start the service and run the tests", () => {
  const [start, tests] = readmeCommands();
  expect(start).toBe("npm install && npm start");
  expect(tests).toBe("npm install && npm test");
  const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
  expect(ci).toContain(`\n${tests}\n`);
});

test("the first README command serves a seeded dev chain, eth_blockNumber and /health on embedded defaults", async () => {
  const health = await (await fetch(`${base}/health`)).json();
  expect(health).toMatchObject({
    status: "ok",
    chain: "ETH",
    chainId: "31337",
    upstream: { status: "ok", headBlockNumber: SEED_HEAD },
    database: { status: "ok", embedded: true },
  });
  const rpc = await post(`${base}/node/jsonrpc`, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_blockNumber",
    params: [],
  });
  expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 1, result: `0x${SEED_HEAD.toString(16)}` });
  const rest = await post(`${base}/node/rest/eth_blockNumber`, undefined);
  expect(rest.json).toBe(`0x${SEED_HEAD.toString(16)}`);
  expect(output).toContain("no API key is configured");
  expect(output).toContain("dev chain seeded");
});

/** One curl of the examples, as bash ran it: its arguments after expansion, its status and body. */
interface Ran {
  args: string[];
  status: string;
  body: string;
}

/**
 * Runs the Examples' sh blocks through bash as they are written, with `curl` wrapped by a function that
 * records each call's expanded arguments, status and body (`-o` and `-w` added to the same arguments).
 */
function runShellExamples(): Ran[] {
  const dir = mkdtempSync(join(tmpdir(), "cg-readme-sh-"));
  try {
    const wrapper = [
      "set -euo pipefail",
      "n=0",
      'curl() { n=$((n+1)); printf "%s\\0" "$@" > "$OUT/$n.args"; command curl -o "$OUT/$n.body" -w "%{http_code}" "$@" > "$OUT/$n.status"; }',
    ].join("\n");
    const script = `${wrapper}\n${blocks(examples, "sh").map(onTestPort).join("\n")}\n`;
    const ran = Bun.spawnSync(["bash", "-c", script], {
      env: { ...process.env, OUT: dir },
      timeout: SCRIPT_TIMEOUT_MS,
    });
    if (ran.exitCode !== 0) throw new Error(`the examples failed: ${ran.stderr.toString()}`);
    const count = readdirSync(dir).filter((f) => f.endsWith(".args")).length;
    return Array.from({ length: count }, (_, i) => {
      const file = (ext: string) => readFileSync(join(dir, `${i + 1}.${ext}`), "utf8");
      return { args: file("args").split("\0").slice(0, -1), status: file("status"), body: file("body") };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What an example asks, to find its expected answer: the route, and for JSON-RPC the method(s). */
function labelOf(ran: Ran): string {
  const url = ran.args.find((a) => a.includes(`:${port}/`))!;
  const path = new URL(url.startsWith("http") ? url : `http://${url}`).pathname;
  const data = ran.args[ran.args.indexOf("-d") + 1];
  if (path !== "/node/jsonrpc" || data === undefined) return path;
  const body = JSON.parse(data);
  return `${path} ${(Array.isArray(body) ? body : [body]).map((c: { method: string }) => c.method).join(",")}`;
}

/** An answer that says something: not null, not empty, no error anywhere a JSON-RPC answer puts one. */
function expectMeaningful(label: string, ran: Ran, json: unknown): void {
  expect({ label, status: ran.status }).toEqual({ label, status: "200" });
  expect({ label, json }).not.toEqual({ label, json: null });
  expect({ label, json }).not.toEqual({ label, json: [] });
  if (label.startsWith("/node/jsonrpc")) {
    for (const answer of Array.isArray(json) ? json : [json]) {
      expect({ label, error: answer.error }).toEqual({ label, error: undefined });
      expect({ label, result: answer.result ?? null }).not.toEqual({ label, result: null });
    }
  }
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`;

/** The seed's blocks and receipts as the service serves them, and what follows from them exactly. */
async function seedFacts() {
  const blocks: any[] = [];
  for (let n = 0; n <= SEED_HEAD; n++) {
    blocks.push(
      (await post(`${base}/node/rest/eth_getBlockByNumber`, { number: n, is_full_trx: false })).json,
    );
  }
  const seeded: (SeedTransaction &
    Record<"baseFee" | "price" | "gasUsed" | "fee", bigint> & { block: any; number: number })[] = [];
  for (const [i, tx] of DEV_SEED.entries()) {
    const block = blocks[i + 1];
    const [receipt] = (await post(`${base}/node/rest/eth_getTransactionReceipt`, { trx_hash: tx.hash })).json;
    const baseFee = BigInt(block.baseFeePerGas);
    const price = baseFee + SEED_TIP_WEI < SEED_MAX_FEE_WEI ? baseFee + SEED_TIP_WEI : SEED_MAX_FEE_WEI;
    const gasUsed = BigInt(receipt.gasUsed);
    seeded.push({ ...tx, block, number: i + 1, baseFee, price, gasUsed, fee: price * gasUsed });
  }
  let balance0 = START_BALANCE_WEI;
  for (const t of seeded) {
    if (t.from === DEV_ACCOUNTS[0]) balance0 -= t.value + t.fee;
    if (t.to === DEV_ACCOUNTS[0]) balance0 += t.value;
  }
  const timestampOf = (b: any) =>
    new Date(Number(BigInt(b.timestamp)) * 1000).toISOString().replace(".000Z", "Z");
  const native = seeded.filter((t) => t.value > 0n);
  const transfersOf0 = native
    .filter((t) => t.from === DEV_ACCOUNTS[0] || t.to === DEV_ACCOUNTS[0])
    .map((t) => ({
      blockNumber: t.number,
      blockTimestamp: timestampOf(t.block),
      transactionHash: t.hash,
      transactionIndex: 0,
      logIndex: null,
      contractAddress: null,
      transferType: "trx",
      from: t.from,
      to: t.to,
      value: t.value,
      fee: t.fee,
      transactionError: false,
      asset: "ETH",
      decimals: 18,
    }));
  const sum = (f: (t: (typeof seeded)[number]) => bigint) => seeded.reduce((total, t) => total + f(t), 0n);
  const count = BigInt(seeded.length);
  const totalFees = sum((t) => t.fee);
  const burntFees = sum((t) => t.baseFee * t.gasUsed);
  const today = new Date().toISOString().slice(0, 10);
  // Every seed transaction moves value: ETH, the token's mint (its creation), a token transfer.
  expect(native.length + seeded.filter((t) => t.data).length).toBe(seeded.length);
  const dayStats = {
    date: today,
    fromBlock: 0,
    toBlock: SEED_HEAD,
    blockCount: SEED_HEAD + 1,
    transactionCount: seeded.length,
    transferCount: seeded.length,
    // Accounts 0, 1 and 2, and the token.
    activeAddresses: new Set([...seeded.flatMap((t) => [t.from, t.to]), DEV_TOKEN].filter(Boolean)).size,
    totalGasUsed: sum((t) => t.gasUsed),
    averageGasPrice: sum((t) => t.price) / count,
    totalFees,
    burntFees,
    minersReward: totalFees - burntFees,
    uncleBlockReward: 0,
  };
  return { blocks, seeded, balance0, transfersOf0, dayStats, today };
}

/** JSON text with its integers read exactly (the expected answers carry bigints). */
function exactJson(text: string): unknown {
  return JSON.parse(text, (_key, value, context?: { source?: string }) =>
    typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value)
      ? BigInt(context!.source!)
      : value,
  );
}

/** Compares with bigints and numbers alike: the expected values name exact integers as bigints. */
const normal = (v: unknown): unknown =>
  JSON.parse(
    JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}` : typeof x === "number" ? `${x}` : x)),
  );

describe("the README's Examples, run verbatim against the started service", () => {
  test(
    "every curl example answers 200 with the seeded chain's exact data",
    async () => {
      const facts = await seedFacts();
      const first = facts.seeded[0]!;
      const last = facts.seeded.at(-1)!;
      const tokenOf1 = (12_345n * 10n ** 18n) / 10n;
      const expected: Record<string, (json: any) => void> = {
        "/node/rest/eth_getBlockByNumber": (block) => {
          expect(block.number).toBe(hex(SEED_HEAD));
          expect(block.transactions).toEqual([last.hash]);
        },
        "/node/rest/eth_getTransactionReceipt": (answer) => {
          expect(answer).toHaveLength(1);
          expect(answer[0]).toMatchObject({
            transactionHash: first.hash,
            blockNumber: "0x1",
            blockHash: first.block.hash,
            from: DEV_ACCOUNTS[0],
            to: DEV_ACCOUNTS[1],
            status: "0x1",
            gasUsed: hex(TRANSFER_GAS),
            effectiveGasPrice: hex(first.price),
            logs: [],
          });
        },
        "/node/jsonrpc eth_getBlockByNumber": (answer) => {
          expect(answer).toMatchObject({ jsonrpc: "2.0", id: 1, result: facts.blocks[0] });
          expect(answer.result.number).toBe("0x0");
        },
        "/node/jsonrpc eth_blockNumber,eth_chainId,eth_getBalance": (answer) => {
          expect(answer).toEqual([
            { jsonrpc: "2.0", id: 1, result: hex(SEED_HEAD) },
            { jsonrpc: "2.0", id: "b", result: "0x7a69" },
            { jsonrpc: "2.0", id: 3, result: hex(facts.balance0) },
          ]);
        },
        "/node/rest/eth_blockNumber": (answer) => expect(answer).toBe(hex(SEED_HEAD)),
        "/node/rest/watch_getTransfersByAddress": (answer) =>
          expect(normal(answer)).toEqual(normal(facts.transfersOf0)),
        "/node/rest/get_token_balances": (answer) =>
          expect(answer).toEqual({
            address: DEV_ACCOUNTS[1],
            tokenBalances: [
              {
                contractAddress: DEV_TOKEN,
                tokenBalance: `0x${tokenOf1.toString(16).padStart(64, "0")}`,
                error: null,
              },
            ],
          }),
        "/node/rest/get_token_metadata": (answer) =>
          expect(answer).toEqual({
            contractAddress: DEV_TOKEN,
            blockchain: "ETH",
            tokenName: "Dev Token",
            tokenSymbol: "DEV",
            tokenDecimals: 18,
            lastUpdate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
          }),
        "/node/rest/watch_getBlockNumberByTimestamp": (answer) => expect(answer).toBe(SEED_HEAD),
        "/node/jsonrpc watch_getStatsByDay": (answer) =>
          expect(normal(answer)).toEqual(normal({ jsonrpc: "2.0", id: 1, result: facts.dayStats })),
        "/node/rest/watch_getBlockNumbersByDay": (answer) =>
          expect(answer).toEqual({
            date: facts.today,
            fromBlock: 0,
            toBlock: SEED_HEAD,
            blockCount: SEED_HEAD + 1,
          }),
        "/health": (answer) =>
          expect(answer).toMatchObject({
            status: "ok",
            upstream: { headBlockNumber: SEED_HEAD },
            indexer: { lastBlockNumber: SEED_HEAD },
          }),
      };
      const ran = runShellExamples();
      const labels = ran.map(labelOf);
      // Every example the README shows, each checked exactly (a new example needs its expected answer here).
      expect(labels).toEqual([
        "/node/rest/eth_getBlockByNumber",
        "/node/rest/eth_getTransactionReceipt",
        "/node/jsonrpc eth_getBlockByNumber",
        "/node/jsonrpc eth_blockNumber,eth_chainId,eth_getBalance",
        "/node/rest/eth_blockNumber",
        "/node/rest/eth_blockNumber",
        "/node/rest/watch_getTransfersByAddress",
        "/node/rest/get_token_balances",
        "/node/rest/get_token_metadata",
        "/node/rest/watch_getBlockNumberByTimestamp",
        "/node/jsonrpc watch_getStatsByDay",
        "/node/rest/watch_getBlockNumbersByDay",
        "/health",
      ]);
      for (const [i, one] of ran.entries()) {
        const json = exactJson(one.body);
        expectMeaningful(labels[i]!, one, json);
        expected[labels[i]!]!(json);
      }
    },
    SCRIPT_TIMEOUT_MS + 10_000,
  );

  test(
    "the big-integer snippet prints exact values and fees under Bun and under Node 20",
    async () => {
      const facts = await seedFacts();
      const [snippet] = blocks(section("### Exact integers in JavaScript"), "js");
      const dir = join(ROOT, "node_modules", ".cache", "chain-gateway");
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `readme-transfers-${port}.mjs`);
      writeFileSync(file, onTestPort(snippet!));
      try {
        const lines = facts.transfersOf0.map((t) => `${t.blockNumber} ${t.value}n ${t.fee}n`);
        for (const runtime of [
          [process.execPath, file],
          ["node", "--harmony-json-parse-with-source", file],
        ]) {
          const ran = Bun.spawnSync(runtime, { cwd: ROOT, timeout: SCRIPT_TIMEOUT_MS });
          expect({ runtime: runtime[0], err: ran.stderr.toString(), out: ran.stdout.toString() }).toEqual({
            runtime: runtime[0],
            err: "",
            out: `${lines.join("\n")}\n`,
          });
        }
        // The README's printed answer is this one.
        const printed = lines.map((l) => `\`${l}\``);
        expect(section("### Exact integers in JavaScript").replace(/\s+/g, " ")).toContain(
          `prints ${printed[0]}, ${printed[1]} and ${printed[2]}, one a line`.replace(/\s+/g, " "),
        );
        // What the note warns of: JSON.parse alone loses the first transfer's digits.
        expect(String(JSON.parse(`${facts.transfersOf0[0]!.value}`))).toBe("1234567890123456800");
        // A runtime without source text access (Node 20 without the flag) refuses rather than answer wrong digits.
        const bare = Bun.spawnSync(["node", file], { cwd: ROOT, timeout: SCRIPT_TIMEOUT_MS });
        if (nodeMajor() < NODE_WITH_SOURCE_TEXT) {
          expect(bare.exitCode).not.toBe(0);
          expect(bare.stderr.toString()).toContain("this runtime hides JSON source text");
        } else {
          expect(bare.stdout.toString()).toBe(`${lines.join("\n")}\n`);
        }
      } finally {
        rmSync(file, { force: true });
      }
    },
    2 * SCRIPT_TIMEOUT_MS,
  );

  test(
    "the WebSocket module prints the blocks the chain makes, under Node and under Bun",
    async () => {
      const [module] = blocks(examples, "js");
      const dir = join(ROOT, "node_modules", ".cache", "chain-gateway");
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `readme-blocks-${port}.mjs`);
      writeFileSync(file, onTestPort(module!));
      try {
        for (const runtime of ["node", process.execPath]) {
          const printer = spawn(runtime, [file], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
          let printed = "";
          printer.stdout!.on("data", (d) => (printed += d));
          printer.stderr!.on("data", (d) => (printed += d));
          try {
            const made: number[] = [];
            // A block a round until both clients have printed one the test made (they subscribe as they start).
            await until(
              `both clients to print a new block (${runtime})`,
              async () => {
                made.push(await makeBlock());
                const ethersBlocks = [...printed.matchAll(/^block (\d+)$/gm)].map((m) => Number(m[1]));
                const viemBlocks = [...printed.matchAll(/^viem block (\d+)n$/gm)].map((m) => Number(m[1]));
                return ethersBlocks.some((n) => made.includes(n)) && viemBlocks.some((n) => made.includes(n))
                  ? true
                  : undefined;
              },
              WS_EXAMPLE_TIMEOUT_MS,
            );
            // Nothing but block lines, and only blocks that exist.
            const last = made.at(-1)!;
            for (const line of printed.trim().split("\n")) {
              const n = Number(/^(?:viem )?block (\d+)n?$/.exec(line)?.[1] ?? Number.NaN);
              expect({ line, known: n >= 1 && n <= last }).toEqual({ line, known: true });
            }
          } finally {
            printer.kill("SIGKILL");
          }
        }
      } finally {
        rmSync(file, { force: true });
      }
    },
    3 * WS_EXAMPLE_TIMEOUT_MS,
  );

  test("each raw WebSocket message answers a subscription, and newHeads notifies the next block", async () => {
    const messages = blocks(examples, "json")[0]!
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(messages.map((m) => m.params[0])).toEqual(["newHeads", "logs", "watch_filters"]);
    const socket = await connectSocket(`ws://127.0.0.1:${port}/node/jsonrpc`);
    try {
      const ids: string[] = [];
      for (const message of messages) {
        socket.send(message);
        const answer = await socket.next((m) => m.id === message.id);
        expect(answer.error).toBeUndefined();
        expect(answer.result).toMatch(/^0x[0-9a-f]+$/);
        ids.push(answer.result);
      }
      const made = await makeBlock();
      const heads = await socket.waitFor(ids[0]!, 1);
      expect(heads.map((h) => h.number)).toContain(hex(made));
    } finally {
      socket.close();
    }
  });
});

let nonce = 0;
/** anvil's account 3, which the seed and the examples leave alone: it signs here, the service only relays. */
const sender = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0/3");

/** Sends a transfer through the service (eth_sendRawTransaction) and returns the block that holds it. */
async function makeBlock(): Promise<number> {
  const raw = await sender.signTransaction({
    to: DEV_ACCOUNTS[2],
    value: 1n,
    nonce: nonce++,
    gasLimit: TRANSFER_GAS,
    maxFeePerGas: SENT_MAX_FEE_WEI,
    maxPriorityFeePerGas: SEED_TIP_WEI,
    chainId: 31_337n,
    type: 2,
  });
  const sent = await post(`${base}/node/jsonrpc`, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sendRawTransaction",
    params: [raw],
  });
  const hash = sent.json.result as string;
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
  const receipt = await until("the transfer to be mined", async () => {
    const answer = await post(`${base}/node/rest/eth_getTransactionReceipt`, { trx_hash: hash });
    return answer.json?.[0] ?? undefined;
  });
  return Number(BigInt(receipt.blockNumber));
}
