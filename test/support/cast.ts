/** Foundry's `cast`, from the @foundry-rs/cast npm package (a devDependency), run as a user runs it. */
import { dirname, join } from "node:path";

const CAST_TIMEOUT_MS = 30_000;

/** The real cast binary, found as devChain.ts finds anvil's: its platform package's bin/cast. */
export function castBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/cast-${process.platform}-${arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), "bin", "cast");
}

export interface CastRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `cast <args>` to its end (at most CAST_TIMEOUT_MS). Never synchronously: the service under test runs
 * in this process, and a blocked event loop would never answer cast.
 */
export async function cast(args: string[]): Promise<CastRun> {
  const child = Bun.spawn([castBinary(), ...args], {
    timeout: CAST_TIMEOUT_MS,
    env: { ...process.env, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { exitCode, stdout: stdout.trim(), stderr: stderr.trim() };
}
