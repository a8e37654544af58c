// Newcomer path: --version on every binary, and the CLI finds the socket
// through $VERIFETCH_SOCKET and explains a missing or forbidden one in words.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { BUILD_ROOT, CLI, SOURCE_ROOT, startBroker, startOrigin } from './env.mjs';

const run = promisify(execFile);
const version = readFileSync(path.join(SOURCE_ROOT, 'meson.build'), 'utf8').match(/version : '([^']+)'/)[1];

let broker, origin;
before(async () => {
  origin = await startOrigin();
  broker = await startBroker({ tcp: false });
});
after(async () => {
  await broker?.stop();
  await origin?.close();
});

test('--version on every binary names it and the project version', async () => {
  for (const [rel, name] of [['broker/verifetchd', 'verifetchd'], ['cli/verifetch', 'verifetch'],
    ['worker/verifetch-worker', 'verifetch-worker']]) {
    const { stdout } = await run(path.join(BUILD_ROOT, rel), ['--version']);
    assert.equal(stdout, `${name} ${version}\n`);
  }
});

test('the CLI takes the socket from $VERIFETCH_SOCKET', async () => {
  const { stdout } = await run(CLI, ['lookup', origin.url('/page'), '--receipt'],
    { env: { ...process.env, VERIFETCH_SOCKET: broker.socket } });
  assert.equal(JSON.parse(stdout).ok, true);
});

test('a missing socket is "no such socket", exit 2', async () => {
  const missing = path.join(broker.dir, 'missing.sock');
  await assert.rejects(run(CLI, ['lookup', origin.url('/page')], { env: { ...process.env, VERIFETCH_SOCKET: missing } }),
    (e) => e.code === 2 && e.stderr.includes(`no such socket: ${missing}`) && !/port 80/.test(e.stderr));
});

test('a socket this user may not open is "permission denied"', { skip: process.getuid() === 0 && 'root bypasses socket permissions' }, async () => {
  const p = path.join(broker.dir, 'locked.sock');
  const server = net.createServer();
  await new Promise((r) => server.listen(p, r));
  chmodSync(p, 0o000);
  try {
    await assert.rejects(run(CLI, ['lookup', origin.url('/page'), '--socket', p]),
      (e) => e.code === 2 && e.stderr.includes(`permission denied: ${p}`));
  } finally {
    await new Promise((r) => server.close(r));
  }
});
