/**
 * Token metadata and balances against a real anvil and PostgreSQL: metadata read from the contracts (the
 * bytes32 form too), balances equal to balanceOf read with ethers straight from the node, and
 * DEFAULT_TOKENS ranked from the index as docs/interface.md §4.7 says.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Contract, ContractFactory, JsonRpcProvider } from "ethers";
import postgres from "postgres";
import { rpc, waitForReceipt } from "./support/chain";
import { DAY, GENESIS_TIME } from "./support/movements";
import { post, startTestService, type TestService } from "./support/service";
import { newAnvil } from "./support/shared";
import { compileContracts } from "./support/solc";
import { until } from "./support/until";

let url: string;
let service: TestService;
let accounts: string[];
const tokens: Record<string, string> = {};
let time = GENESIS_TIME;

const hex = (n: bigint | number) => `0x${n.toString(16)}`;
const rest = (name: string, body: unknown) => post(`${service.url}/node/rest/${name}`, body);
const jsonrpc = (method: string, params: unknown[], id: unknown = 1) =>
  post(`${service.url}/node/jsonrpc`, { jsonrpc: "2.0", id, method, params });

beforeAll(async () => {
  const anvil = await newAnvil(["--timestamp", String(GENESIS_TIME)]);
  url = anvil.url;
  const call = rpc(url);
  const artifacts = await compileContracts();
  accounts = (await call<string[]>("eth_accounts")).map((a) => a.toLowerCase());
  const [alice, bob, carol] = accounts as [string, string, string];

  /** Each transaction in its own block, at the next chosen second. */
  async function send(tx: Record<string, unknown>) {
    await call("evm_setNextBlockTimestamp", [++time]);
    const receipt = await waitForReceipt(
      url,
      await call<string>("eth_sendTransaction", [{ gas: hex(3_000_000), ...tx }]),
    );
    if (receipt.status !== "0x1") throw new Error(`transaction failed: ${JSON.stringify(tx)}`);
    return receipt;
  }
  async function deploy(name: string, args: unknown[] = []) {
    const request = await new ContractFactory(
      artifacts[name]!.abi,
      artifacts[name]!.bytecode,
    ).getDeployTransaction(...args);
    return ((await send({ from: alice, data: request.data })).contractAddress as string).toLowerCase();
  }
  const encode = (name: string, fn: string, args: unknown[]) =>
    new Contract(accounts[0]!, artifacts[name]!.abi).interface.encodeFunctionData(fn, args);
  const mint = (token: string, to: string, amount: bigint) =>
    send({ from: alice, to: token, data: encode("TestToken", "mint", [to, amount]) });
  const transfer = (token: string, from: string, to: string, amount: bigint) =>
    send({ from, to: token, data: encode("TestToken", "transfer", [to, amount]) });

  // More than a day before the rest: busy, but not in the last day's ranking.
  tokens.old = await deploy("TestToken", ["Busy Long Ago", "BLA", 18]);
  for (let i = 0; i < 10; i++) await mint(tokens.old, bob, 1n);
  time += 3 * DAY;
  tokens.one = await deploy("TestToken", ["Token One", "ONE", 18]);
  tokens.two = await deploy("TestToken", ["Token Two", "TWO", 6]);
  tokens.three = await deploy("TestToken", ["Token Three", "THREE", 0]);
  tokens.four = await deploy("TestToken", ["Token Four", "FOUR", 8]);
  tokens.bytes32 = await deploy("Bytes32Token");
  tokens.nft = await deploy("TestNFT");
  tokens.forwarder = await deploy("Forwarder");
  // one: 4 transfers, 1 sender (the zero address); two and four: 3 transfers, 2 senders; three: 3, 1.
  for (let i = 0; i < 4; i++) await mint(tokens.one, alice, 10n ** 18n + BigInt(i));
  for (const t of [tokens.two, tokens.four]) {
    await mint(t, alice, 2n ** 70n);
    await transfer(t, alice, bob, 5n);
    await transfer(t, alice, carol, 7n);
  }
  for (let i = 0; i < 3; i++) await mint(tokens.three, i === 0 ? alice : bob, 3n);
  await send({ from: alice, to: tokens.bytes32, data: encode("Bytes32Token", "mint", [alice, 12345n]) });
  await send({ from: alice, to: tokens.nft, data: encode("TestNFT", "mint", [alice, 1n]) });

  const head = Number(await call<string>("eth_blockNumber"));
  service = await startTestService({ upstreamUrls: [url], env: { INDEXER: "on", HEAD_POLL_MS: "50" } });
  await until(
    "the index to catch up",
    async () =>
      ((await (await fetch(`${service.url}/health`)).json()) as any).indexer.lastBlockNumber === head ||
      undefined,
    30_000,
  );
}, 120_000);

describe("token metadata", () => {
  const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

  test("name, symbol and decimals from the contract, over REST and JSON-RPC", async () => {
    const answer = await rest("get_token_metadata", {
      token_address: tokens.two!.toUpperCase().replace("0X", "0x"),
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      contractAddress: tokens.two,
      blockchain: "ETH",
      tokenName: "Token Two",
      tokenSymbol: "TWO",
      tokenDecimals: 6,
      lastUpdate: expect.stringMatching(RFC3339),
    });
    expect((await jsonrpc("watch_getTokenMetadata", [tokens.two])).json.result).toEqual(answer.json);
  });

  test("a token whose name and symbol are bytes32", async () => {
    expect((await rest("get_token_metadata", { token_address: tokens.bytes32 })).json).toMatchObject({
      tokenName: "Old Token",
      tokenSymbol: "OLD",
      tokenDecimals: 9,
    });
  });

  test("not a token (no code, or no decimals): null", async () => {
    for (const address of [accounts[0]!, tokens.nft!, tokens.forwarder!, `0x${"00".repeat(19)}01`]) {
      const answer = await rest("get_token_metadata", { token_address: address });
      expect({ address, status: answer.status, text: answer.text }).toEqual({
        address,
        status: 200,
        text: "null",
      });
    }
  });

  test("stored, and read again once a day old", async () => {
    const first = (await rest("get_token_metadata", { token_address: tokens.three })).json;
    expect((await rest("get_token_metadata", { token_address: tokens.three })).json).toEqual(first);
    const sql = postgres(service.databaseUrl, { max: 1 });
    try {
      await sql`update token_metadata set updated_at = now() - interval '2 days', name = 'stale'
        where address = decode(${tokens.three!.slice(2)}, 'hex')`;
      const renewed = (await rest("get_token_metadata", { token_address: tokens.three })).json;
      expect(renewed.tokenName).toBe("Token Three");
      expect(Date.parse(renewed.lastUpdate)).toBeGreaterThan(Date.now() - 60_000);
    } finally {
      await sql.end();
    }
  });
});

describe("token balances", () => {
  async function balanceOf(token: string, holder: string): Promise<string> {
    const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true });
    try {
      const abi = ["function balanceOf(address) view returns (uint256)"];
      const value = (await new Contract(token, abi, provider).getFunction("balanceOf")(holder)) as bigint;
      return `0x${value.toString(16).padStart(64, "0")}`;
    } finally {
      provider.destroy();
    }
  }

  test("balanceOf at each contract; no code and a revert are errors", async () => {
    const alice = accounts[0]!;
    const list = [
      tokens.one!,
      tokens.two!,
      tokens.bytes32!,
      tokens.nft!,
      accounts[5]!,
      tokens.forwarder!,
      tokens.one!,
    ];
    const expected = {
      address: alice,
      tokenBalances: [
        { contractAddress: tokens.one, tokenBalance: await balanceOf(tokens.one!, alice), error: null },
        { contractAddress: tokens.two, tokenBalance: await balanceOf(tokens.two!, alice), error: null },
        {
          contractAddress: tokens.bytes32,
          tokenBalance: await balanceOf(tokens.bytes32!, alice),
          error: null,
        },
        { contractAddress: tokens.nft, tokenBalance: await balanceOf(tokens.nft!, alice), error: null },
        { contractAddress: accounts[5], tokenBalance: null, error: true },
        { contractAddress: tokens.forwarder, tokenBalance: null, error: true },
        { contractAddress: tokens.one, tokenBalance: await balanceOf(tokens.one!, alice), error: null },
      ],
    };
    // Real balances, not zeros.
    expect(BigInt(expected.tokenBalances[1]!.tokenBalance!)).toBe(2n ** 70n - 12n);
    const answer = await rest("get_token_balances", { address: alice, list_contract_address: list });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(expected);
    const call = await jsonrpc(
      "watch_getTokenBalances",
      [alice.toUpperCase().replace("0X", "0x"), list],
      "ask-7",
    );
    expect(call.json).toEqual({
      jsonrpc: "2.0",
      id: "ask-7",
      result: { address: alice, token_balances: expected.tokenBalances },
    });
  });

  test("DEFAULT_TOKENS: the most transferred of the last day, ties by senders then address", async () => {
    const ties = [tokens.two!, tokens.four!].sort();
    const ranking = [tokens.one, ...ties, tokens.three, tokens.bytes32];
    const call = await jsonrpc("watch_getTokenBalances", [accounts[1], "DEFAULT_TOKENS"]);
    expect(call.json.result.token_balances.map((b: any) => b.contractAddress)).toEqual(ranking);
    const bob = accounts[1]!;
    expect(call.json.result.token_balances[3]).toEqual({
      contractAddress: tokens.three,
      tokenBalance: await balanceOf(tokens.three!, bob),
      error: null,
    });
    expect(BigInt(call.json.result.token_balances[3].tokenBalance)).toBe(6n);
  });

  test("DEFAULT_TOKENS from the configuration", async () => {
    const configured = await startTestService({
      upstreamUrls: [url],
      env: { DEFAULT_TOKENS: `${tokens.three},${tokens.one!.toUpperCase().replace("0X", "0x")}` },
    });
    try {
      const call = await post(`${configured.url}/node/jsonrpc`, {
        jsonrpc: "2.0",
        id: 1,
        method: "watch_getTokenBalances",
        params: [accounts[0], "DEFAULT_TOKENS"],
      });
      expect(call.json.result.token_balances.map((b: any) => b.contractAddress)).toEqual([
        tokens.three,
        tokens.one,
      ]);
    } finally {
      await configured.stop();
    }
  });

  test("too long a list: 422 and -32602 that say so", async () => {
    const list = Array.from({ length: 1001 }, () => tokens.one);
    const answer = await rest("get_token_balances", { address: accounts[0], list_contract_address: list });
    expect(answer.status).toBe(422);
    expect(answer.json.detail).toEqual([
      {
        loc: ["body", "list_contract_address"],
        msg: "List should have at most 1000 items",
        type: "too_long",
      },
    ]);
    const call = await jsonrpc("watch_getTokenBalances", [accounts[0], list]);
    expect(call.json.error.code).toBe(-32602);
    expect(call.json.error.message).toContain("at most 1000");
  });
});
