/** The README's sections and the examples in them, run as a user would (the family sections' tests). */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const README = join(import.meta.dir, "..", "..", "README.md");

/** A section of the README, from its heading to the next of the same level. */
export function readmeSection(heading: string): string {
  const lines = readFileSync(README, "utf8").split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`the README has no ${heading}`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "));
  return lines.slice(start + 1, end).join("\n");
}

/** The code blocks of a section in one language, in order. */
export function codeBlocks(section: string, language: string): string[] {
  return [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]+?)\\n\`\`\``, "g"))].map(
    (m) => m[1]!,
  );
}

/** The curl commands of a block: one a paragraph after its comment, or several one after the other. */
export function curlCommands(block: string): string[] {
  return block
    .split(/\n\n/)
    .map((part) =>
      part
        .split("\n")
        .filter((line) => !line.startsWith("#"))
        .join("\n"),
    )
    .flatMap((part) => part.split(/\n(?=curl )/))
    .filter((command) => command.startsWith("curl "));
}

/**
 * A README command against a service: the port 8000 it names replaced by the service's, the key added (none
 * for a command that carries its own, in its path). Spawned, not spawnSync: the service answers on this
 * process's event loop. Its answer, parsed.
 */
export async function runCurl(command: string, serviceUrl: string, key: string | undefined): Promise<any> {
  const local = command.replaceAll("localhost:8000", `127.0.0.1:${new URL(serviceUrl).port}`);
  const keyed = key === undefined ? local : local.replace("curl -s ", `curl -s -H 'x-api-key: ${key}' `);
  const child = Bun.spawn(["bash", "-c", keyed], { stdout: "pipe" });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  return JSON.parse(out);
}
