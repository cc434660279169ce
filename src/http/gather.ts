/**
 * Writing a long answer (an NDJSON range, a long JSON-RPC batch) to a direct stream: parts are gathered in
 * one reused buffer and handed to the response when it is full. The response copies what it is given, so
 * a cached answer is copied once, from where it is read, and many parts cost one send.
 */
import type { RawJson } from "../json";

const encoder = new TextEncoder();
/**
 * Parts are gathered into this many bytes before a write to the response: one send for many parts (a
 * write a part cost about a send each, measured on a stream of 7 KB lines).
 */
const GATHER_BYTES = 256 * 1024;

export interface Gather {
  text(text: string): void;
  /** Text known to be ASCII (a line's own members), copied without an encoder. */
  ascii(text: string): void;
  raw(raw: RawJson): void;
  /** Writes what is gathered to the response. */
  flush(): void;
  /** Waits while the response's buffer is full; false once the reader has gone. */
  drained(): Promise<boolean> | boolean;
}

/** Gathers text and bytes in one reused buffer and writes it to a direct stream's controller when full. */
export function createGather(controller: ReadableStreamDirectController): Gather {
  const buffer = new Uint8Array(GATHER_BYTES);
  let at = 0;
  let wait: Promise<number> | undefined;
  let gone = false;
  const send = (data: Uint8Array | string) => {
    const n = controller.write(data);
    if (typeof n !== "number") wait = n;
    else if (n === 0) gone = true;
  };
  const flush = () => {
    if (at === 0) return;
    send(buffer.subarray(0, at));
    at = 0;
  };
  // Parts larger than half the buffer go to the response as they are (it copies them anyway), after what
  // is gathered: a part that skipped the buffer must not overtake the parts before it.
  const large = (data: Uint8Array | string) => {
    flush();
    send(data);
  };
  const text = (value: string) => {
    // Three bytes a UTF-16 unit at most.
    if (value.length * 3 > GATHER_BYTES / 2) return large(value);
    if (at + value.length * 3 > GATHER_BYTES) flush();
    at += encoder.encodeInto(value, buffer.subarray(at)).written;
  };
  return {
    text,
    ascii(value) {
      if (value.length > GATHER_BYTES / 2) return large(value);
      if (at + value.length > GATHER_BYTES) flush();
      for (let i = 0; i < value.length; i++) buffer[at++] = value.charCodeAt(i);
    },
    raw(raw) {
      if (typeof raw === "string") return text(raw);
      if (raw.length > GATHER_BYTES / 2) return large(raw);
      if (at + raw.length > GATHER_BYTES) flush();
      buffer.set(raw, at);
      at += raw.length;
    },
    flush,
    drained() {
      if (gone) return false;
      if (!wait) return true;
      const pending = wait;
      wait = undefined;
      return pending.then((n) => n !== 0 && !gone);
    },
  };
}
