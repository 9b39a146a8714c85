'use strict';
// The job handler example (examples/job_handler.js) as a real process:
// concurrent requests for one job run one after the other, each writing
// its result with its own, growing token.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const { test } = require('node:test');
const { exited, lines, withServer } = require('./support');

function post(port, urlPath, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method: 'POST', timeout: 30000 }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(data) }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end(body);
  });
}

test('the job handler example takes the lock and fences its write', { timeout: 90000 }, async (t) => {
  const { server, client } = await withServer(t);
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'examples', 'job_handler.js'), server.endpoint, '0'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const [word, portText] = (await lines(child.stdout).next()).split(' ');
  assert.equal(word, 'listening');
  const port = Number(portText);
  const answers = await Promise.all([post(port, '/jobs/42', 'a'), post(port, '/jobs/42', 'bb'), post(port, '/jobs/7', 'c')]);
  for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
  const tokens42 = answers.slice(0, 2).map((a) => a.body.token);
  assert.notEqual(tokens42[0], tokens42[1], 'one holder at a time, each with its own token');
  const stored = await client.fencedGet('results/42');
  assert.equal(stored.token, Math.max(...tokens42), 'the last writer holds the newest token');
  assert.match(stored.text, /^job 42 done/);
  assert.equal((await post(port, '/nope', '')).status, 404);
  const info = await client.lockInfo('jobs/42');
  assert.ok(info === null || info.holders.length === 0, 'released after each job');
  child.kill('SIGTERM');
  assert.equal(await exited(child, 30000), 0);
});
