/** Loaded once before the test files: stops the shared real parts after the last file. */
import { afterAll } from "bun:test";
import { teardownAll } from "./shared";

/**
 * tronweb's generated protobuf modules (`goog.object.extend(proto, ...)`) extend a global `proto` that only
 * google-protobuf's own modules create; under bun test which of them loads first varies, and the other order
 * throws "proto is not defined" (about one load in eight). The object they all extend, made first.
 */
(globalThis as { proto?: object }).proto ??= {};

/** Stopping every service, node and database the run started can take more than bun's default 5 s. */
const TEARDOWN_MS = 60_000;

afterAll(teardownAll, TEARDOWN_MS);
