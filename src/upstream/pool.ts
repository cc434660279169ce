/**
 * The upstream nodes of UPSTREAM_URLS, first preferred. A call that fails in a way another node may not
 * (unreachable, timeout, garbage) moves on to the next one; the node's own JSON-RPC errors do not.
 */
import { ServiceError, UpstreamUnavailableError } from "../errors";
import type { Logger } from "../log";
import { postJsonRpc, redactUrl } from "./http";
import { decodeResponses, encodeRequest, UpstreamProtocolError } from "./rpc";

export interface UpstreamPool {
  /** The node's result as raw JSON text; throws NodeError or an Upstream*Error. */
  call(method: string, params: unknown[]): Promise<string>;
  readonly urls: readonly string[];
}

export function createUpstreamPool(options: {
  urls: string[];
  timeoutMs: number;
  log: Logger;
}): UpstreamPool {
  const { urls, timeoutMs, log } = options;
  if (urls.length === 0) throw new Error("createUpstreamPool: no upstream URLs");
  let nextId = 1;

  async function callOne(url: string, method: string, params: unknown[]): Promise<string> {
    const id = nextId++;
    const text = await postJsonRpc(url, encodeRequest(id, method, params), timeoutMs);
    const outcomes = decodeResponses(text);
    // A node that cannot read a request answers with id null (parse error, invalid request).
    const unread = outcomes.size === 1 ? outcomes.get(null) : undefined;
    const outcome = outcomes.get(id) ?? (unread?.ok === false ? unread : undefined);
    if (!outcome) throw new UpstreamProtocolError(`upstream ${redactUrl(url)} answered another request id`);
    if (!outcome.ok) throw outcome.error;
    return outcome.raw;
  }

  return {
    urls,
    async call(method, params) {
      let last: ServiceError | undefined;
      for (const url of urls) {
        try {
          return await callOne(url, method, params);
        } catch (error) {
          if (
            !(error instanceof UpstreamUnavailableError) &&
            !(error instanceof ServiceError && error.status === 504)
          ) {
            throw error;
          }
          last = error as ServiceError;
          log.warn("upstream call failed", { upstream: redactUrl(url), method, error: last.message });
        }
      }
      throw last!;
    },
  };
}
