// The dependency-free client against the real verifetchd: unix socket and
// loopback TCP, refusals naming the field, and connection errors in words.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { VerifetchClient, VerifetchError } from '../src/client.js';
import { GOOD_TEXT, startBroker, startOrigin } from '../../../tests/mcp/env.mjs';

let broker, origin;
before(async () => {
  origin = await startOrigin();
  broker = await startBroker({ tcp: true });
});
after(async () => {
  await broker?.stop();
  await origin?.close();
});

test('lookup over the unix socket (from $VERIFETCH_SOCKET) returns the ToolResult', async () => {
  process.env.VERIFETCH_SOCKET = broker.socket;
  const client = new VerifetchClient();
  assert.equal(client.socketPath, broker.socket);
  const r = await client.lookup({ url: origin.url('/page') });
  assert.equal(r.status, 'success');
  assert.equal(r.content[0].json.ok, true);
  assert.ok(r.content[1].text.includes(GOOD_TEXT));
});

test('lookup over loopback TCP with a bearer token; a wall is status error', async () => {
  const client = new VerifetchClient({ url: `http://127.0.0.1:${broker.tcpPort}`, token: broker.token });
  const r = await client.lookup({ url: origin.url('/wall') });
  assert.equal(r.status, 'error');
  assert.equal(r.content[0].json.ok, false);
  assert.match(r.content[1].text, /^LOOKUP FAILED:/);
  const spec = await client.toolSpec('openai');
  assert.equal(spec.function.name, 'verified_web_lookup');
  await assert.rejects(new VerifetchClient({ url: `http://127.0.0.1:${broker.tcpPort}`, token: 'nope' }).toolSpec(),
    (e) => e instanceof VerifetchError && e.status === 403);
});

test('bad input is a VerifetchError naming the field', async () => {
  const client = new VerifetchClient({ socketPath: broker.socket });
  await assert.rejects(client.lookup({ url: 'ftp://example.com/' }), (e) => e.status === 400 && e.field === 'url');
  await assert.rejects(client.lookup({ url: origin.url('/page'), colour: 1 }), (e) => e.field === 'colour');
});

test('connection problems are said in words', async () => {
  await assert.rejects(new VerifetchClient({ socketPath: `${broker.dir}/missing.sock` }).toolSpec(),
    (e) => e instanceof VerifetchError && /^no such socket: /.test(e.message));
});
