'use strict';
// leasehold: Node.js client for the leasehold lock service (docs/node.md).
//
// Sessions that keep themselves alive and announce their loss, locks with
// fencing tokens and FIFO waits, fenced writes, leader election.

const errors = require('./errors');
const { Client, connect } = require('./client');
const { Election } = require('./election');
const { parseEndpoint, parseEndpoints } = require('./endpoints');
const { Lock } = require('./lock');
const { Session, defaultDriftBound } = require('./session');

module.exports = {
  connect,
  Client,
  Session,
  Lock,
  Election,
  defaultDriftBound,
  parseEndpoint,
  parseEndpoints,
  ...errors,
};
