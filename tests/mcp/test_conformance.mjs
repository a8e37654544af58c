// @modelcontextprotocol/conformance server scenarios against verifetchd's
// /mcp, with the expected-failure baseline in conformance-baseline.yml.
// The conformance CLI takes only a URL (no headers), so it reaches /mcp on
// the unix socket through a byte relay on a loopback port; Host and Origin
// pass through unchanged, so the DNS-rebinding scenario still tests the broker.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { startBroker, startUnixRelay } from './env.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let broker, relay;
before(async () => {
  broker = await startBroker({ tcp: false });
  relay = await startUnixRelay(broker.socket);
});
after(async () => {
  await relay?.close();
  await broker?.stop();
});

test('server scenarios: the protocol layer passes, only the baseline fails', { timeout: 170000 }, async () => {
  const bin = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const child = spawn(process.execPath, [bin, 'server', '--url', `http://localhost:${relay.port}/mcp`,
    '--expected-failures', path.join(here, 'conformance-baseline.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const summary = out.slice(out.indexOf('=== SUMMARY ==='));
  assert.equal(code, 0, summary);
  for (const s of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
    assert.match(summary, new RegExp(`✓ ${s}: [1-9]\\d* passed, 0 failed`), `${s} must pass\n${summary}`);
});
