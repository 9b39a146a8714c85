'use strict';
// Errors of the leasehold client: one class per server error code.
//
// The server's error prefixes (docs/protocol.md) map one-to-one to these
// classes, as in the Python client (clients/python/src/leasehold/errors.py)
// and the C++ client's leasehold::ErrorCode. Every class derives from
// LeaseholdError, whose `code` is the wire prefix (or a client-side code:
// UNREACHABLE, WOULDBLOCK, LOST).

class LeaseholdError extends Error {
  /** @param {string} [message] */
  constructor(message = '') {
    super(message);
    this.name = new.target.name;
  }

  /** The wire prefix ("ERR", "STALE", ...) or a client-side code. */
  get code() {
    return /** @type {typeof LeaseholdError} */ (this.constructor).code;
  }

  toString() {
    if (/^(NOAUTH|WRONGPASS|NOPERM) /.test(this.message)) return this.message; // the message keeps the prefix
    return `${this.code} ${this.message}`.trim();
  }
}
LeaseholdError.code = 'INTERNAL';

/** @param {string} name @param {string} code @returns {typeof LeaseholdError} */
function define(name, code) {
  const cls = { [name]: class extends LeaseholdError {} }[name];
  cls.code = code;
  return cls;
}

/** No endpoint answered within the call's deadline. */
const Unreachable = define('Unreachable', 'UNREACHABLE');
/** The deadline passed; for an acquire: not granted within the wait. */
const TimedOut = define('TimedOut', 'TIMEOUT');
/** A try-once acquire (wait 0) found the lock held by others. */
const WouldBlock = define('WouldBlock', 'WOULDBLOCK');
const NotHolder = define('NotHolder', 'NOTHOLDER');
/** A fenced write with a token that is no longer the holder's. */
const StaleToken = define('StaleToken', 'STALE');
const SessionExpired = define('SessionExpired', 'EXPIRED');
const NotFound = define('NotFound', 'NOTFOUND');
const Conflict = define('Conflict', 'CONFLICT');
const InvalidArgument = define('InvalidArgument', 'ERR');
const LimitExceeded = define('LimitExceeded', 'LIMIT');
const Unavailable = define('Unavailable', 'UNAVAILABLE');
/** -REDIRECT host:port; followed by the client, raised after too many hops. */
const Redirect = define('Redirect', 'REDIRECT');
/** WRONGPASS / NOAUTH: never retried, trying again cannot help. */
const AuthenticationFailed = define('AuthenticationFailed', 'WRONGPASS');
/** NOPERM: the user may not run this command or use this name or session. */
const PermissionDenied = define('PermissionDenied', 'NOPERM');
const Internal = define('Internal', 'INTERNAL');
/** Lock.check(): the lock or its session is lost, or past the safe deadline. */
const LockLost = define('LockLost', 'LOST');

/** @type {Map<string, typeof LeaseholdError>} */
const BY_CODE = new Map();
for (const cls of [TimedOut, NotHolder, StaleToken, SessionExpired, NotFound, Conflict, InvalidArgument,
  LimitExceeded, Unavailable, Redirect, Internal, AuthenticationFailed, PermissionDenied]) {
  BY_CODE.set(cls.code, cls);
}
BY_CODE.set('NOAUTH', AuthenticationFailed);

/**
 * The error for an error reply's text ("STALE token 3 is not ..."). A text
 * whose first word is not a known code is an ERR (InvalidArgument) with the
 * whole text as its message; NOAUTH / WRONGPASS / NOPERM keep their prefix.
 * @param {string} text
 * @returns {LeaseholdError}
 */
function fromReplyText(text) {
  const space = text.indexOf(' ');
  const code = space < 0 ? text : text.slice(0, space);
  const rest = space < 0 ? '' : text.slice(space + 1);
  const cls = BY_CODE.get(code);
  if (cls === undefined) return new InvalidArgument(text);
  if (cls === AuthenticationFailed || cls === PermissionDenied) return new cls(text);
  return new cls(rest);
}

module.exports = {
  LeaseholdError, Unreachable, TimedOut, WouldBlock, NotHolder, StaleToken, SessionExpired, NotFound,
  Conflict, InvalidArgument, LimitExceeded, Unavailable, Redirect, AuthenticationFailed, PermissionDenied,
  Internal, LockLost, fromReplyText,
};
