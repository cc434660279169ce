import { expect, test } from "bun:test";
import { socketUrlOf } from "./socket";

test("an upstream's WebSocket URL: configured, derived from its HTTP URL, or off", () => {
  expect(socketUrlOf("http://127.0.0.1:8545", undefined)).toBe("ws://127.0.0.1:8545");
  expect(socketUrlOf("https://node.example/v2/key", "")).toBe("wss://node.example/v2/key");
  expect(socketUrlOf("https://node.example/v2/key", "wss://other.example/ws")).toBe("wss://other.example/ws");
  expect(socketUrlOf("http://127.0.0.1:8545", "off")).toBeUndefined();
});
