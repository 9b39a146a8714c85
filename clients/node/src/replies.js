'use strict';
// Decoding replies into JavaScript values, and the words of LOCK.ACQUIRE.
//
// Replies arrive from ioredis in RESP2 (integers as decimal strings, since
// the client asks for `stringNumbers` so that no 64-bit value is rounded; a
// map is a flat [k1, v1, k2, v2, ...] array) or from the session's RESP3
// connection (src/resp3.js). Ids and tokens are JavaScript numbers; a value
// beyond Number.MAX_SAFE_INTEGER is refused with Internal rather than
// rounded. Pure functions.

const { Internal } = require('./errors');

/** @param {unknown} v @returns {string} */
function text(v) {
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return String(v);
}

/** @param {unknown} v @returns {string} */
function show(v) {
  let s;
  try {
    s = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  } catch {
    s = String(v);
  }
  return s === undefined ? String(v) : s.slice(0, 200);
}

/**
 * An integer reply as a safe JavaScript integer.
 * @param {unknown} v
 * @param {string} [what]
 * @returns {number}
 */
function asInt(v, what = 'an integer reply') {
  let n;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'bigint') n = Number(v);
  else if (typeof v === 'string' || Buffer.isBuffer(v)) {
    const s = text(v);
    n = /^-?[0-9]+$/.test(s) ? Number(s) : NaN;
  } else n = NaN;
  if (!Number.isSafeInteger(n)) throw new Internal(`expected ${what}, got ${show(v)}`);
  return n;
}

/**
 * A map reply (RESP3 Map, or RESP2 flat array) as a plain object.
 * @param {unknown} v
 * @returns {Record<string, unknown>}
 */
function asMap(v) {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [text(k), x]));
  if (!Array.isArray(v) || v.length % 2 !== 0) throw new Internal(`expected a map reply, got ${show(v)}`);
  /** @type {Record<string, unknown>} */
  const out = {};
  for (let i = 0; i < v.length; i += 2) out[text(v[i])] = v[i + 1];
  return out;
}

/** @param {unknown} v @returns {unknown[]} */
function asArray(v) {
  if (!Array.isArray(v)) throw new Internal(`expected an array reply, got ${show(v)}`);
  return v;
}

/**
 * @param {unknown} reply LOCK.INFO's reply (or one item of LOCK.LIST)
 * @returns {import('./index').LockInfo | null}
 */
function lockInfo(reply) {
  if (reply === null || reply === undefined) return null;
  const m = asMap(reply);
  const holders = asArray(m.holders ?? []).map((x) => {
    const h = asMap(x);
    return {
      session: asInt(h.session, 'a session id'),
      owner: text(h.owner ?? ''),
      token: asInt(h.token, 'a token'),
      heldMs: asInt(h.held_ms ?? 0),
    };
  });
  const waiters = asArray(m.waiters ?? []).map((x) => {
    const w = asMap(x);
    return {
      session: asInt(w.session, 'a session id'),
      owner: text(w.owner ?? ''),
      mode: text(w.mode ?? ''),
      waitedMs: asInt(w.waited_ms ?? 0),
    };
  });
  return {
    name: text(m.name),
    mode: /** @type {'exclusive' | 'shared' | 'semaphore'} */ (text(m.mode)),
    limit: asInt(m.limit ?? 1),
    holders,
    waiters,
    lastToken: asInt(m.last_token ?? 0),
    delayMs: asInt(m.delay_ms ?? 0),
  };
}

/**
 * @param {unknown} reply FENCE.GET's reply: [value, token] or nil
 * @returns {import('./index').FencedValue | null}
 */
function fencedValue(reply) {
  if (reply === null || reply === undefined) return null;
  if (!Array.isArray(reply) || reply.length !== 2) throw new Internal(`expected [value, token], got ${show(reply)}`);
  const value = Buffer.isBuffer(reply[0]) ? reply[0] : Buffer.from(text(reply[0]));
  return { value, text: value.toString('utf8'), token: asInt(reply[1], 'a token') };
}

/**
 * LOCK.ACQUIRE's words (docs/protocol.md).
 * @param {{ name: string, session: number, shared: boolean, limit: number | undefined,
 *           waitMs: number | undefined, delayMs: number, seq: number }} a
 *   waitMs undefined: try once; 0: wait without a deadline
 * @returns {(string | number)[]}
 */
function acquireArgs(a) {
  /** @type {(string | number)[]} */
  const args = ['LOCK.ACQUIRE', a.name, a.session];
  if (a.shared) args.push('SHARED');
  if (a.limit !== undefined) args.push('LIMIT', a.limit);
  if (a.waitMs !== undefined) args.push('WAIT', a.waitMs);
  if (a.delayMs) args.push('DELAY', a.delayMs);
  args.push('SEQ', a.seq);
  return args;
}

module.exports = { text, asInt, asMap, asArray, lockInfo, fencedValue, acquireArgs };
