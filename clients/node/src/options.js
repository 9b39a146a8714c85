'use strict';
// Client options: defaults, validation, the backoff pause. Pure functions.

const fs = require('node:fs');
const { InvalidArgument } = require('./errors');
const { parseEndpoints } = require('./endpoints');

/**
 * @param {import('./index').ConnectOptions} opts
 * @returns {import('./index').ResolvedOptions}
 */
function resolveOptions(opts = {}) {
  if (typeof opts !== 'object' || opts === null) throw new InvalidArgument('options must be an object');
  const caFile = opts.tls && typeof opts.tls === 'object' ? opts.tls.caFile : undefined;
  const tls = Boolean(opts.tls);
  const endpoints = parseEndpoints(opts.endpoints ?? '127.0.0.1:7379', tls);
  const o = {
    endpoints,
    user: opts.user,
    password: opts.password,
    name: opts.name,
    connectTimeout: opts.connectTimeout ?? 1000,
    callTimeout: opts.callTimeout ?? 5000,
    backoffInitial: opts.backoffInitial ?? 25,
    backoffMax: opts.backoffMax ?? 1000,
    maxRedirects: opts.maxRedirects ?? 4,
    maxConnections: opts.maxConnections ?? 8,
    /** @type {Buffer | undefined} */
    ca: undefined,
  };
  for (const k of /** @type {const} */ (['connectTimeout', 'callTimeout', 'backoffInitial', 'backoffMax'])) {
    if (!(Number.isFinite(o[k]) && o[k] > 0)) throw new InvalidArgument(`${k} must be a positive number of ms`);
  }
  if (o.backoffMax < o.backoffInitial) throw new InvalidArgument('need backoffInitial <= backoffMax');
  if (!Number.isInteger(o.maxRedirects) || o.maxRedirects < 0) throw new InvalidArgument('maxRedirects must be >= 0');
  if (!Number.isInteger(o.maxConnections) || o.maxConnections < 1) throw new InvalidArgument('maxConnections must be >= 1');
  if (o.name !== undefined && !/^[\x21-\x7e]+$/.test(o.name)) {
    throw new InvalidArgument('name (CLIENT SETNAME) must be printable ASCII without spaces');
  }
  if (o.password !== undefined && typeof o.password !== 'string') throw new InvalidArgument('password must be a string');
  if (o.user !== undefined && (typeof o.user !== 'string' || o.password === undefined)) {
    throw new InvalidArgument('user needs a password');
  }
  if (caFile !== undefined) {
    try {
      o.ca = fs.readFileSync(caFile);
    } catch (e) {
      throw new InvalidArgument(`tls.caFile: cannot read ${caFile}: ${/** @type {Error} */ (e).message}`);
    }
  }
  return o;
}

/**
 * The pause before retry `attempt` (0-based): exponential, capped, jittered to [p/2, p].
 * @param {{ backoffInitial: number, backoffMax: number }} o
 * @param {number} attempt
 */
function backoffPause(o, attempt) {
  const pause = Math.min(o.backoffMax, o.backoffInitial * 2 ** Math.min(attempt, 16));
  return pause / 2 + Math.random() * (pause / 2);
}

module.exports = { resolveOptions, backoffPause };
