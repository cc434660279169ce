/**
 * A real headless Chromium for page tests, driven over the Chrome DevTools Protocol with Bun's own
 * WebSocket client: no npm dependency, and nothing that downloads a browser of its own.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTeardown } from "./shared";
import { chromiumPath } from "./tools";

/** Chromium's first start on a fresh profile takes a few seconds on a small machine. */
const START_TIMEOUT_MS = 30_000;
const COMMAND_TIMEOUT_MS = 15_000;
const LOAD_TIMEOUT_MS = 30_000;
/** A full-page capture of a long page is the slowest command. */
const SCREENSHOT_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 5_000;
const STDERR_KEPT_CHARS = 4_000;

export interface Viewport {
  width: number;
  height: number;
  deviceScaleFactor?: number;
  /** A phone's viewport: the page's meta viewport applies and scrollbars overlay the page. */
  mobile?: boolean;
}

export interface Page {
  /**
   * One line per console error or failed assertion, uncaught exception, error log entry, failed request
   * and HTTP answer >= 400, since the page was opened; it grows as the page runs.
   */
  readonly problems: string[];
  /** The expression's value (promises awaited); throws with the page's exception text if it throws. */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls until the expression is truthy; throws naming the expression after `timeoutMs`. */
  waitFor(expression: string, timeoutMs: number): Promise<void>;
  /** A PNG of the whole page, beyond the viewport. */
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
}

export interface Browser {
  /** The browser process; it leads its own process group, which close() stops whole. */
  readonly pid: number;
  readonly userDataDir: string;
  /** A new tab with this viewport, once the page has fired its load event. */
  open(url: string, viewport: Viewport): Promise<Page>;
  /** Stops Chromium, waits for it to exit and removes its profile. Safe to call more than once. */
  close(): Promise<void>;
}

interface CdpEvent {
  method: string;
  params: any;
  sessionId?: string;
}

interface Pending {
  method: string;
  sessionId: string | undefined;
  resolve: (result: any) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

class CdpConnection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly sessions = new Map<string, (event: CdpEvent) => void>();
  private closedReason: string | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (event) => {
      let message: any;
      try {
        message = JSON.parse(String(event.data));
      } catch {
        // An answer lost to a bad frame must not leave its command waiting for its whole timeout.
        this.failAll(`Chromium sent a message that is not JSON: ${String(event.data).slice(0, 200)}`);
        ws.close();
        return;
      }
      this.receive(message);
    };
    ws.onclose = () => this.failAll("the DevTools connection closed");
  }

  static async connect(url: string): Promise<CdpConnection> {
    // Bun's client garbles some inflated messages from Chromium (seen as JSON that no longer parses),
    // and compression buys nothing on loopback.
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new Error(`could not connect to Chromium's DevTools at ${url}`));
        ws.onclose = () => reject(new Error(`Chromium's DevTools at ${url} closed the connection`));
      }),
      COMMAND_TIMEOUT_MS,
      `connecting to Chromium's DevTools at ${url}`,
    ).catch((error) => {
      ws.close();
      throw error;
    });
    return new CdpConnection(ws);
  }

  send(
    method: string,
    params: object = {},
    sessionId?: string,
    timeoutMs = COMMAND_TIMEOUT_MS,
  ): Promise<any> {
    if (this.closedReason) return Promise.reject(new Error(`${method}: ${this.closedReason}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from Chromium within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { method, sessionId, resolve, reject, timer });
      try {
        this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      } catch (error) {
        this.pending.delete(id);
        clearTimeout(timer);
        reject(new Error(`${method}: ${(error as Error).message}`));
      }
    });
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  /** Events of one attached target (flattened session). */
  onSession(sessionId: string, listener: (event: CdpEvent) => void): void {
    this.sessions.set(sessionId, listener);
  }

  close(): void {
    this.failAll("the DevTools connection was closed");
    this.ws.close();
  }

  private receive(message: any): void {
    if (typeof message.id === "number") {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      clearTimeout(pending.timer);
      if (message.error) pending.reject(new Error(`${pending.method}: ${message.error.message}`));
      else pending.resolve(message.result);
      return;
    }
    if (message.method === "Target.detachedFromTarget") {
      const sessionId = message.params.sessionId;
      this.sessions.delete(sessionId);
      this.failPending((p) => p.sessionId === sessionId, "the page was detached (closed or crashed)");
      return;
    }
    if (message.sessionId) this.sessions.get(message.sessionId)?.(message);
  }

  private failAll(reason: string): void {
    this.closedReason ??= reason;
    this.sessions.clear();
    this.failPending(() => true, reason);
  }

  private failPending(which: (p: Pending) => boolean, reason: string): void {
    for (const [id, p] of this.pending) {
      if (!which(p)) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new Error(`${p.method}: ${reason}`));
    }
  }
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** CDP positions are 0-based; people read 1-based ones. */
function location(url: string | undefined, line?: number, column?: number): string {
  if (!url) return "";
  if (line === undefined) return ` (at ${url})`;
  return ` (at ${url}:${line + 1}${column === undefined ? "" : `:${column + 1}`})`;
}

function remoteObjectText(object: any): string {
  if (object.unserializableValue !== undefined) return object.unserializableValue;
  if (object.type === "string") return object.value;
  if (object.type !== "object" && object.type !== "function" && "value" in object)
    return String(object.value);
  if (object.subtype === "error") return String(object.description ?? "Error").split("\n")[0]!;
  if (object.subtype === "null") return "null";
  return object.description ?? object.type;
}

/** The readable line for an event that means the page went wrong, or undefined. */
function problemOf(event: CdpEvent, requestUrls: Map<string, string>): string | undefined {
  const p = event.params;
  switch (event.method) {
    case "Runtime.consoleAPICalled": {
      if (p.type !== "error" && p.type !== "assert") return undefined;
      const frame = p.stackTrace?.callFrames?.[0];
      const text = (p.args ?? []).map(remoteObjectText).join(" ");
      return oneLine(
        `console.${p.type}: ${text}${location(frame?.url, frame?.lineNumber, frame?.columnNumber)}`,
      );
    }
    case "Runtime.exceptionThrown": {
      const d = p.exceptionDetails;
      const what = d.exception ? remoteObjectText(d.exception) : d.text;
      return oneLine(`uncaught exception: ${what}${location(d.url, d.lineNumber, d.columnNumber)}`);
    }
    case "Log.entryAdded":
      if (p.entry.level !== "error") return undefined;
      return oneLine(
        `log (${p.entry.source}) error: ${p.entry.text}${location(p.entry.url, p.entry.lineNumber)}`,
      );
    case "Network.loadingFailed": {
      const url = requestUrls.get(p.requestId) ?? `request ${p.requestId}`;
      const why = [p.errorText, p.canceled ? "canceled" : "", p.blockedReason ?? ""]
        .filter(Boolean)
        .join(", ");
      return oneLine(`request failed (${why}): ${p.type ?? "resource"} ${url}`);
    }
    case "Network.responseReceived": {
      const r = p.response;
      if (r.status < 400) return undefined;
      return oneLine(
        `HTTP ${r.status}${r.statusText ? ` ${r.statusText}` : ""}: ${p.type ?? "resource"} ${r.url}`,
      );
    }
    case "Inspector.targetCrashed":
      return "the page crashed";
    default:
      return undefined;
  }
}

async function openPage(
  cdp: CdpConnection,
  url: string,
  viewport: Viewport,
  reconnect: () => Promise<CdpConnection>,
): Promise<Page> {
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    let connection = cdp;
    // Bun's WebSocket client has been seen to drop the connection (code 1006, Chromium still running) as a
    // tab closes, on a loaded machine: the tab is then closed again over a new connection.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (connection.closed) connection = await reconnect();
      // With the browser gone its tabs are gone too.
      if (connection.closed) return;
      try {
        await connection.send("Target.closeTarget", { targetId });
        return;
      } catch (error) {
        if (!connection.closed) {
          // Closed by the first attempt, whose answer was lost with its connection.
          if (attempt > 0 && /No target with given id/.test((error as Error).message)) return;
          throw error;
        }
      }
    }
    throw new Error(`closing the tab ${targetId}: the DevTools connection dropped twice`);
  };
  try {
    const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
    const problems: string[] = [];
    const requestUrls = new Map<string, string>();
    // Page events in arrival order, so the load that counts is the one after our navigation committed;
    // kept only while waiting for it.
    let pageEvents: CdpEvent[] | undefined = [];
    let wake: (() => void) | undefined;
    cdp.onSession(sessionId, (event) => {
      if (event.method === "Network.requestWillBeSent")
        requestUrls.set(event.params.requestId, event.params.request.url);
      const problem = problemOf(event, requestUrls);
      if (problem) problems.push(problem);
      if (pageEvents && event.method.startsWith("Page.")) {
        pageEvents.push(event);
        wake?.();
      }
    });
    const send = (method: string, params?: object, timeoutMs?: number) =>
      cdp.send(method, params, sessionId, timeoutMs);
    await Promise.all([
      send("Page.enable"),
      send("Runtime.enable"),
      send("Log.enable"),
      send("Inspector.enable"),
      send("Network.enable"),
      send("Emulation.setDeviceMetricsOverride", {
        width: viewport.width,
        height: viewport.height,
        deviceScaleFactor: viewport.deviceScaleFactor ?? 1,
        mobile: viewport.mobile ?? false,
      }),
    ]);

    pageEvents.length = 0;
    const navigation = await send("Page.navigate", { url }, LOAD_TIMEOUT_MS);
    if (navigation.errorText) throw new Error(`navigating to ${url} failed: ${navigation.errorText}`);
    const loaded = () => {
      const events = pageEvents ?? [];
      const from = navigation.loaderId
        ? events.findIndex(
            (e) =>
              e.method === "Page.frameNavigated" &&
              e.params.frame.id === navigation.frameId &&
              e.params.frame.loaderId === navigation.loaderId,
          )
        : 0;
      return from >= 0 && events.some((e, i) => i >= from && e.method === "Page.loadEventFired");
    };
    await withTimeout(
      new Promise<void>((resolve) => {
        wake = () => {
          if (loaded()) resolve();
        };
        wake();
      }),
      LOAD_TIMEOUT_MS,
      `waiting for ${url} to load`,
    ).finally(() => {
      wake = undefined;
      pageEvents = undefined;
    });

    const evaluate = async <T>(expression: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<T> => {
      const answer = await send(
        "Runtime.evaluate",
        { expression, returnByValue: true, awaitPromise: true },
        timeoutMs,
      );
      if (answer.exceptionDetails) {
        const d = answer.exceptionDetails;
        const what = d.exception ? remoteObjectText(d.exception) : d.text;
        throw new Error(`evaluating ${expression} threw: ${what}`);
      }
      return answer.result.value as T;
    };

    return {
      problems,
      evaluate: <T>(expression: string) => evaluate<T>(expression),
      async waitFor(expression, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        let lastError: unknown;
        for (;;) {
          const left = deadline - Date.now();
          if (left <= 0) break;
          try {
            if (await evaluate(expression, Math.max(left, 100))) return;
            lastError = undefined;
          } catch (error) {
            // Not there yet (e.g. an element still missing) counts as falsy; the last reason is reported.
            lastError = error;
          }
          await Bun.sleep(Math.min(50, Math.max(deadline - Date.now(), 0)));
        }
        const reason = lastError ? ` (last: ${(lastError as Error).message})` : "";
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}${reason}`);
      },
      async screenshot(path) {
        // A tab in the background is not painted: its capture would be the last frame painted, older
        // than its DOM.
        await send("Page.bringToFront");
        const { data } = await send(
          "Page.captureScreenshot",
          { format: "png", captureBeyondViewport: true },
          SCREENSHOT_TIMEOUT_MS,
        );
        await Bun.write(path, Buffer.from(data, "base64"));
      },
      close,
    };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** Signals Chromium's whole process group (browser, zygote, renderers, GPU). */
function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {}
}

/**
 * Processes of the group that still run. Helpers orphaned by the browser's exit stay zombies until
 * init reaps them, so `kill(-pgid, 0)` alone cannot tell a stopped Chromium from a running one.
 */
export function liveGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // The command name may hold spaces and parentheses; the fields after its last ")" do not.
    const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(group) === pgid && state !== "Z" && state !== "X") live.push(Number(entry));
  }
  return live;
}

async function groupStopped(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (liveGroupMembers(pgid).length > 0) {
    if (Date.now() > deadline) return false;
    await Bun.sleep(25);
  }
  return true;
}

/** A headless Chromium on a fresh profile, stopped at the end of the run if the test does not close it. */
export async function launchBrowser(): Promise<Browser> {
  const userDataDir = mkdtempSync(join(tmpdir(), "cg-chromium-"));
  const child = Bun.spawn(
    [
      chromiumPath(),
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      "--remote-debugging-port=0",
      `--user-data-dir=${userDataDir}`,
      "about:blank",
    ],
    // Its own process group, so that stopping it also stops the helpers it forks.
    { stdin: "ignore", stdout: "ignore", stderr: "pipe", detached: true },
  );
  // Drained continuously so a chatty Chromium never blocks on a full pipe; the tail explains failures.
  let stderr = "";
  const drained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
      stderr = (stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_KEPT_CHARS);
    }
  })().catch(() => {});

  let cdp: CdpConnection | undefined;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      cdp?.close();
      signalGroup(child.pid, "SIGTERM");
      const exited = await Promise.race([
        child.exited.then(() => true),
        Bun.sleep(EXIT_TIMEOUT_MS).then(() => false),
      ]);
      if (!exited || !(await groupStopped(child.pid, EXIT_TIMEOUT_MS))) {
        signalGroup(child.pid, "SIGKILL");
        await withTimeout(child.exited, EXIT_TIMEOUT_MS, "waiting for Chromium to exit after SIGKILL");
        if (!(await groupStopped(child.pid, EXIT_TIMEOUT_MS)))
          throw new Error(`Chromium processes ${liveGroupMembers(child.pid).join(", ")} survived SIGKILL`);
      }
      await withTimeout(drained, EXIT_TIMEOUT_MS, "draining Chromium's stderr").catch(() => {});
    })().finally(() => rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    return closing;
  };
  onTeardown(close);

  let endpoint: string | undefined;
  try {
    const portFile = join(userDataDir, "DevToolsActivePort");
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!endpoint) {
      if (existsSync(portFile)) {
        // Chromium writes "<port>\n<browser ws path>"; a half-written file is read again next round.
        const [port, path] = readFileSync(portFile, "utf8").split("\n");
        if (port && /^\d+$/.test(port) && path?.startsWith("/devtools/browser/"))
          endpoint = `ws://127.0.0.1:${port}${path}`;
      }
      if (endpoint) break;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `Chromium exited (${child.exitCode ?? child.signalCode}) before listening: ${stderr}`,
        );
      if (Date.now() > deadline)
        throw new Error(`Chromium did not write ${portFile} within ${START_TIMEOUT_MS} ms: ${stderr}`);
      await Bun.sleep(50);
    }
    cdp = await CdpConnection.connect(endpoint);
  } catch (error) {
    await close();
    throw error;
  }

  const browserEndpoint = endpoint!;
  let connection = cdp;
  /** The DevTools connection, made again if it dropped while Chromium runs (see openPage's close). */
  const connected = async (): Promise<CdpConnection> => {
    if (connection.closed && !closing && child.exitCode === null && child.signalCode === null) {
      connection = await CdpConnection.connect(browserEndpoint);
      cdp = connection;
    }
    return connection;
  };
  return {
    pid: child.pid,
    userDataDir,
    open: async (url, viewport) => {
      if (closing) throw new Error(`open(${url}): the browser is closed`);
      return openPage(await connected(), url, viewport, connected);
    },
    close,
  };
}
