/**
 * The gather writes parts to a real direct stream in the order they were given, whatever their size: a part
 * too large for its buffer goes out on its own, after what was gathered before it.
 */
import { expect, test } from "bun:test";
import { createGather } from "./gather";

/**
 * The text an HTTP response carries when `write` hands it parts through a gather (over a real server: a
 * response copies what it is given, where a Response read in-process may keep views of the reused buffer).
 */
async function streamed(write: (out: ReturnType<typeof createGather>) => void): Promise<string> {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      const stream = new ReadableStream<Uint8Array>({
        type: "direct",
        pull(controller: ReadableStreamDirectController) {
          const out = createGather(controller);
          write(out);
          out.flush();
          controller.close();
        },
      } as never);
      return new Response(stream);
    },
  });
  try {
    return await (await fetch(`http://127.0.0.1:${server.port}/`)).text();
  } finally {
    server.stop(true);
  }
}

const KB = 1024;

test("a part larger than half the buffer does not overtake the small parts gathered before it", async () => {
  // 60 K characters of text count as up to 180 KB of UTF-8: over half the 256 KB buffer, yet they fit.
  const text = "t".repeat(60 * KB);
  const ascii = "a".repeat(140 * KB);
  const bytes = new TextEncoder().encode("b".repeat(140 * KB));
  const out = await streamed((g) => {
    g.ascii("[1,");
    g.text(text);
    g.ascii(",2,");
    g.raw(bytes);
    g.ascii(",3,");
    g.ascii(ascii);
    g.text(",4]");
  });
  expect(out).toBe(`[1,${text},2,${"b".repeat(140 * KB)},3,${ascii},4]`);
});
