/**
 * Fires a list of HTTP requests all at once and prints their answers as JSON. Runs in its own process
 * (see concurrently() in service.ts): Bun caps a process's fetches in flight at 256, and inside `bun test`
 * the cap cannot be raised, so 1,000 concurrent clients in the test process would queue behind each
 * other and behind the service's own upstream requests.
 */
export interface LoadRequest {
  url: string;
  body?: string;
  method?: string;
  headers?: Record<string, string>;
}

const requests = (await Bun.file(process.argv[2]!).json()) as LoadRequest[];
const answers = await Promise.all(
  requests.map(async (r) => {
    try {
      const response = await fetch(r.url, {
        method: r.method ?? "POST",
        body: r.body,
        headers: { "content-type": "application/json", ...r.headers },
      });
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        text: await response.text(),
      };
    } catch (error) {
      // A server killed under load (a test doing so on purpose): status 0 and the reason.
      return { status: 0, headers: {}, text: String((error as Error).message) };
    }
  }),
);
await Bun.write(process.argv[3]!, JSON.stringify(answers));
