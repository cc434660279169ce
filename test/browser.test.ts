/**
 * The page-test harness itself: a clean page must show no problems and a broken one must show each of
 * its faults, or a page test built on it could pass without looking.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, launchBrowser, liveGroupMembers } from "./support/browser";
import { until } from "./support/until";

const TEST_TIMEOUT_MS = 60_000;
const VIEWPORT = { width: 800, height: 600 };
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

// Without an icon of its own Chromium asks for /favicon.ico, and that 404 would rightly be a problem.
const CLEAN_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; min-height: 100vh; background: linear-gradient(90deg, #036, #6cf); color: #fff }</style>
</head><body><p id="out">not rendered</p>
<script>
document.title = "Clean page";
document.getElementById("out").textContent = "rendered by inline script";
</script></body></html>`;

const BROKEN_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>broken</title></head><body>
<img src="/missing.png" alt="">
<script>
console.error("boom");
setTimeout(() => { throw new Error("kaboom from a timer"); }, 0);
</script></body></html>`;

function html(body: string): Response {
  return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
}

let server: ReturnType<typeof Bun.serve>;
let browser: Browser;
let base: string;
const shots = mkdtempSync(join(tmpdir(), "cg-browser-test-"));

beforeAll(async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const { pathname } = new URL(request.url);
      if (pathname === "/clean") return html(CLEAN_PAGE);
      if (pathname === "/broken") return html(BROKEN_PAGE);
      return new Response("not found", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  browser = await launchBrowser();
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
  rmSync(shots, { recursive: true, force: true });
}, TEST_TIMEOUT_MS);

describe("headless Chromium harness", () => {
  test(
    "a clean page has no problems, runs its script and can be captured",
    async () => {
      const page = await browser.open(`${base}/clean`, VIEWPORT);
      try {
        await page.waitFor(`document.title === "Clean page"`, 10_000);
        expect(await page.evaluate<string>(`document.getElementById("out").textContent`)).toBe(
          "rendered by inline script",
        );
        const path = join(shots, "clean.png");
        await page.screenshot(path);
        expect(existsSync(path)).toBe(true);
        const png = readFileSync(path);
        expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
        expect(png.length).toBeGreaterThan(1000);
        expect(page.problems).toEqual([]);
      } finally {
        await page.close();
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "a broken page reports its console error, its 404 and its uncaught exception",
    async () => {
      const page = await browser.open(`${base}/broken`, VIEWPORT);
      try {
        const has = (pattern: RegExp) => page.problems.some((line) => pattern.test(line));
        const expected = [
          /console\.error: boom\b/,
          /\b404\b.*\/missing\.png/,
          /uncaught.*kaboom from a timer/,
        ];
        await until(
          `problems ${expected.join(", ")}`,
          async () => (expected.every(has) ? true : undefined),
          10_000,
        ).catch((error) => {
          throw new Error(`${error.message}; problems were: ${JSON.stringify(page.problems, null, 2)}`);
        });
        for (const pattern of expected) expect(has(pattern)).toBe(true);
      } finally {
        await page.close();
      }
    },
    TEST_TIMEOUT_MS,
  );

  test("evaluate reports the page's exception and waitFor gives up in time", async () => {
    const page = await browser.open(`${base}/clean`, VIEWPORT);
    try {
      await expect(page.evaluate(`(() => { throw new Error("inside evaluate"); })()`)).rejects.toThrow(
        "inside evaluate",
      );
      const started = Date.now();
      await expect(page.waitFor("window.neverSet === true", 300)).rejects.toThrow("window.neverSet === true");
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await page.close();
    }
  });

  test(
    "close stops every Chromium process and removes the profile",
    async () => {
      const { pid, userDataDir } = browser;
      await browser.close();
      expect(liveGroupMembers(pid)).toEqual([]);
      expect(existsSync(userDataDir)).toBe(false);
      await expect(browser.open(`${base}/clean`, VIEWPORT)).rejects.toThrow("closed");
    },
    TEST_TIMEOUT_MS,
  );
});
