'use strict';
// The package's types (src/index.d.ts) compile with the documented use
// (test/types_check.ts) under `tsc --strict` (typescript is a
// devDependency in package-lock.json, installed by `npm ci`).

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');

test('tsc --noEmit over index.d.ts and a typed use of it', { timeout: 120000 }, () => {
  const root = path.join(__dirname, '..');
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], { encoding: 'utf8', timeout: 110000 });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
