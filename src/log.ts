/** Structured JSON logs, one object a line on stdout. Never pass API keys in fields. */

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

type Fields = Record<string, unknown>;

/** The least time between two warnings of one kind logged by warnEveryMinute. */
const WARN_EVERY_MS = 60_000;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
  readonly level: LogLevel;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

function serialize(value: unknown): unknown {
  if (value instanceof Error) {
    const out: Fields = { name: value.name, message: value.message };
    if (value.cause !== undefined) out.cause = serialize(value.cause);
    if (value.stack) out.stack = value.stack.split("\n").slice(1, 6).join("\n");
    return out;
  }
  return typeof value === "bigint" ? value.toString() : value;
}

export function createLogger(options: {
  level: LogLevel;
  fields?: Fields;
  write?: (line: string) => void;
}): Logger {
  const threshold = RANK[options.level];
  const base = options.fields ?? {};
  const write = options.write ?? ((line: string) => process.stdout.write(line));

  function emit(level: LogLevel, msg: string, fields?: Fields) {
    if (RANK[level] < threshold) return;
    const record: Fields = { time: new Date().toISOString(), level, msg, ...base };
    if (fields) for (const key in fields) record[key] = serialize(fields[key]);
    write(`${JSON.stringify(record)}\n`);
  }

  return {
    level: options.level,
    debug: (msg, fields) => emit("debug", msg, fields),
    info: (msg, fields) => emit("info", msg, fields),
    warn: (msg, fields) => emit("warn", msg, fields),
    error: (msg, fields) => emit("error", msg, fields),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

/**
 * A warning of one kind logged at most once a minute (WARN_EVERY_MS), the ones between dropped: for a failure
 * that repeats while its cause lasts (a full disk, a node read that keeps failing), which would otherwise
 * fill the log with the same line.
 */
export function warnEveryMinute(
  log: Logger,
  message: string,
  clock: () => number = () => performance.now(),
): (fields?: Fields) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (fields) => {
    const now = clock();
    if (now - last < WARN_EVERY_MS) return;
    last = now;
    log.warn(message, fields);
  };
}
