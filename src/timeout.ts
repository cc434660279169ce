/** A promise bounded in time: it settles as `work` does, or rejects with `timeoutError()` after `ms`. */
export function withTimeout<T>(work: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeoutError()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
