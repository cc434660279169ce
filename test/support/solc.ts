/** Compiles the test contracts with the solc npm package; the output is cached by source hash. */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Artifact {
  abi: any[];
  bytecode: string;
}

const CONTRACTS_DIR = join(import.meta.dir, "contracts");
const CACHE_DIR = join(import.meta.dir, "..", "..", "node_modules", ".cache", "chain-gateway");

export async function compileContracts(): Promise<Record<string, Artifact>> {
  const sources: Record<string, { content: string }> = {};
  for (const file of readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith(".sol"))
    .sort()) {
    sources[file] = { content: readFileSync(join(CONTRACTS_DIR, file), "utf8") };
  }
  const solcVersion = (await import("solc/package.json")).version as string;
  const hash = new Bun.CryptoHasher("sha256")
    .update(solcVersion)
    .update(JSON.stringify(sources))
    .digest("hex");
  const cacheFile = join(CACHE_DIR, `contracts-${hash.slice(0, 16)}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, "utf8"));

  const solc = (await import("solc")).default;
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length > 0)
    throw new Error(
      `solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`,
    );
  const artifacts: Record<string, Artifact> = {};
  for (const file of Object.keys(output.contracts)) {
    for (const [name, contract] of Object.entries<any>(output.contracts[file])) {
      artifacts[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(artifacts));
  return artifacts;
}
