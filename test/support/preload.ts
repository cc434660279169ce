/** Loaded once before the test files: stops the shared real parts after the last file. */
import { afterAll } from "bun:test";
import { teardownAll } from "./shared";

afterAll(teardownAll);
