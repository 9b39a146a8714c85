'use strict';
// The monotonic clock every deadline of the client uses, and small timing
// helpers. performance.now() is monotonic (milliseconds, not affected by
// wall-clock steps).

const { performance } = require('node:perf_hooks');

/** @returns {number} monotonic milliseconds */
function now() {
  return performance.now();
}

/**
 * Resolves after `ms` (at once when ms <= 0), earlier when `signal` aborts.
 * Never rejects.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

const TIMED_OUT = Symbol('timed out');

/**
 * `promise`'s outcome, or TIMED_OUT when `ms` passes first (Infinity: no
 * limit). A later rejection of `promise` is swallowed (the caller has moved on).
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T | typeof TIMED_OUT>}
 */
function withTimeout(promise, ms) {
  if (!Number.isFinite(ms)) return promise;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
  });
  promise.catch(() => {});
  return /** @type {Promise<T | typeof TIMED_OUT>} */ (Promise.race([promise, timeout])).finally(() => clearTimeout(timer));
}

module.exports = { now, pause, withTimeout, TIMED_OUT };
