/** Loaded once before the test files: stops the shared real parts after the last file. */
import { afterAll } from "bun:test";
import { teardownAll } from "./shared";

/** Stopping every service, node and database the run started can take more than bun's default 5 s. */
const TEARDOWN_MS = 60_000;

afterAll(teardownAll, TEARDOWN_MS);
