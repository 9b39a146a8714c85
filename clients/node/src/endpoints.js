'use strict';
// Endpoint parsing: "host:port", "[::1]:port", "tls://host:port", as the C++
// and Python clients accept them. Pure functions.

const { InvalidArgument } = require('./errors');

const MAX_ENDPOINTS = 64;

/**
 * @typedef {{ host: string, port: number, tls: boolean }} Endpoint
 */

/**
 * @param {string} input "host:port", "[ipv6]:port", optionally "tls://" first
 * @param {boolean} [defaultTls] whether an endpoint without a scheme uses TLS
 * @returns {Endpoint}
 */
function parseEndpoint(input, defaultTls = false) {
  let text = String(input).trim();
  let tls = defaultTls;
  if (text.startsWith('tls://')) {
    tls = true;
    text = text.slice(6);
  }
  let host;
  let portText;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') throw new InvalidArgument(`endpoint '${input}' is not [ipv6]:port`);
    host = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw new InvalidArgument(`endpoint '${input}' has no :port`);
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  if (!host) throw new InvalidArgument(`endpoint '${input}' has no host`);
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : 0;
  if (port < 1 || port > 65535) throw new InvalidArgument(`endpoint '${input}' has a bad port`);
  return { host, port, tls };
}

/**
 * A comma-separated string or an array of "host:port" strings.
 * @param {string | string[]} value
 * @param {boolean} [defaultTls]
 * @returns {Endpoint[]}
 */
function parseEndpoints(value, defaultTls = false) {
  const items = typeof value === 'string' ? value.split(',').filter((s) => s.trim()) : Array.from(value);
  const out = items.map((item) => parseEndpoint(item, defaultTls));
  if (out.length === 0) throw new InvalidArgument('no endpoints given');
  if (out.length > MAX_ENDPOINTS) throw new InvalidArgument(`${out.length} endpoints, at most ${MAX_ENDPOINTS}`);
  return out;
}

/** @param {Endpoint} ep @returns {string} "host:port" (IPv6 in brackets) */
function endpointText(ep) {
  return ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
}

/** @param {Endpoint} a @param {Endpoint} b */
function sameEndpoint(a, b) {
  return a.host === b.host && a.port === b.port && a.tls === b.tls;
}

module.exports = { parseEndpoint, parseEndpoints, endpointText, sameEndpoint, MAX_ENDPOINTS };
