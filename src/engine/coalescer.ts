/** Identical calls in flight share one execution: the first runs it, the others wait for its answer. */
export interface Coalescer<T> {
  run(key: string, work: () => Promise<T>): { promise: Promise<T>; shared: boolean };
}

export function createCoalescer<T>(): Coalescer<T> {
  const inFlight = new Map<string, Promise<T>>();
  return {
    run(key, work) {
      const existing = inFlight.get(key);
      if (existing) return { promise: existing, shared: true };
      const promise = work().finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
      return { promise, shared: false };
    },
  };
}
