import { expect, test } from "bun:test";
import { ConfigError } from "../../config";
import { createLogger } from "../../log";
import { DevNodeMissingError, requireLitecoind, startUtxoDevNode } from "./devNode";

test("no litecoind: the start stops (a configuration error) naming Debian's package", () => {
  expect(() => requireLitecoind("/nonexistent/litecoind")).toThrow(
    new DevNodeMissingError(
      "CHAIN=LTC with no UPSTREAM_URLS starts a regtest litecoind, and /nonexistent/litecoind is missing: install Debian's litecoind package (apt-get install litecoind), or set UPSTREAM_URLS",
    ),
  );
  expect(() => requireLitecoind("/nonexistent/litecoind")).toThrow(ConfigError);
});

test("a dev node for LTC only: another coin without UPSTREAM_URLS is told to set them", async () => {
  const log = createLogger({ level: "error" });
  for (const chain of ["BTC", "DOGE"] as const) {
    await expect(startUtxoDevNode({ dataDir: "/nonexistent", log, chain })).rejects.toThrow(
      `CHAIN=${chain} with no UPSTREAM_URLS: the service starts a dev node for LTC only (a regtest litecoind); set UPSTREAM_URLS=http://user:password@host:port to a ${chain} node`,
    );
  }
});
