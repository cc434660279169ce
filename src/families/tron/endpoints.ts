/**
 * Where a java-tron upstream answers, from its URL in UPSTREAM_URLS (docs/interface.md, "The TRON family"):
 *  - one base URL under which `/wallet/*`, `/walletsolidity/*` and `/jsonrpc` answer, as TronGrid and a
 *    node behind a reverse proxy serve them: `https://api.trongrid.io`, `https://proxy.example/tron`;
 *  - a bare node's own ports, written after `#`: `http://10.0.0.1:8090#solidity=8091&jsonrpc=8545` (the
 *    full node's HTTP API on the URL's port, its solidity API and its JSON-RPC on theirs; each may also be a
 *    whole URL);
 *  - a provider's key after `#` too: `https://api.trongrid.io#key=<KEY>`, sent as TronGrid's
 *    `TRON-PRO-API-KEY` header on every request to that upstream and never shown (the fragment is no part of
 *    any URL the service shows: upstream/http.ts `redactUrl`).
 */
import { ConfigError } from "../../config";
import type { NodeEndpoints } from "../../upstream/protocol";

/** TronGrid's header for a provider's key. */
export const TRON_KEY_HEADER = "TRON-PRO-API-KEY";
/** The paths of java-tron's three faces. */
const FULL = "wallet/";
const SOLIDITY = "walletsolidity/";
const JSON_RPC_PATH = "/jsonrpc";
const PORT = /^[0-9]{1,5}$/;
const KNOWN = new Set(["solidity", "jsonrpc", "key"]);

/** The URL `value` names: a port on the base URL's host, or a URL of its own. */
function on(base: URL, value: string, what: string): URL {
  if (PORT.test(value)) {
    const url = new URL(base.href);
    url.port = value;
    return url;
  }
  try {
    return new URL(value);
  } catch {
    throw new ConfigError(`UPSTREAM_URLS: the ${what} of a TRON upstream must be a port or a URL`);
  }
}

/** The URL with the path's trailing slash off, so that a path is appended once. */
const trimmed = (url: URL) => `${url.origin}${url.pathname.replace(/\/+$/, "")}`;

/** Credentials in the URL (user:password@) ride along as Basic auth (upstream/http.ts), on every face. */
function withUserinfo(url: string, from: URL): string {
  if (from.username === "" && from.password === "") return url;
  const u = new URL(url);
  u.username = from.username;
  u.password = from.password;
  return u.href.replace(/\/$/, "");
}

export function tronEndpoints(configured: string): NodeEndpoints {
  let base: URL;
  try {
    base = new URL(configured);
  } catch {
    throw new ConfigError("UPSTREAM_URLS: a TRON upstream must be a URL");
  }
  const options = new URLSearchParams(base.hash.slice(1));
  for (const name of options.keys()) {
    if (!KNOWN.has(name)) {
      throw new ConfigError(
        `UPSTREAM_URLS: a TRON upstream's URL takes solidity=, jsonrpc= and key= after "#", not ${JSON.stringify(name)}`,
      );
    }
  }
  base.hash = "";
  const solidity = options.get("solidity");
  const jsonrpc = options.get("jsonrpc");
  const full = withUserinfo(trimmed(base), base);
  const solidityBase = solidity ? withUserinfo(trimmed(on(base, solidity, "solidity API")), base) : full;
  const rpcUrl = jsonrpc
    ? withUserinfo(
        `${trimmed(on(base, jsonrpc, "JSON-RPC"))}${PORT.test(jsonrpc) ? JSON_RPC_PATH : ""}`,
        base,
      )
    : `${full}${JSON_RPC_PATH}`;
  const key = options.get("key");
  return {
    rpcUrl,
    headers: key ? { [TRON_KEY_HEADER]: key } : {},
    // The engine's name of a path is the path without its leading slash (httpApi.ts).
    pathUrl(method) {
      if (method.startsWith(FULL)) return `${full}/${method}`;
      if (method.startsWith(SOLIDITY)) return `${solidityBase}/${method}`;
      return undefined;
    },
  };
}
