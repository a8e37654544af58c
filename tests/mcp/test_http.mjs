// Streamable HTTP at /mcp (unix socket and loopback TCP) driven by the real
// @modelcontextprotocol/sdk client, plus the transport's own guards.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBroker, startOrigin, unixFetch } from './env.mjs';
import * as cases from './cases.mjs';

let broker, origin;
before(async () => {
  origin = await startOrigin();
  broker = await startBroker({ tcp: true });
});
after(async () => {
  await broker?.stop();
  await origin?.close();
});

async function connectUnix() {
  const c = new Client({ name: 'verifetch-tests', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), { fetch: unixFetch(broker.socket) }));
  return c;
}

async function connectTcp(token = broker.token) {
  const c = new Client({ name: 'verifetch-tests', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${broker.tcpPort}/mcp`),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return c;
}

for (const [name, connect] of [['unix socket', connectUnix], ['loopback TCP', connectTcp]]) {
  describe(`Streamable HTTP over ${name}`, () => {
    let client;
    before(async () => { client = await connect(); });
    after(async () => { await client?.close(); });
    test('tools/list', () => cases.listsTheTool(client));
    test('tools/call success', () => cases.callSucceeds(client, origin));
    test('tools/call on a Cloudflare wall is isError with the receipt', () => cases.wallIsAnError(client, origin));
    test('bad arguments are -32602 naming the field', () => cases.badArgumentsNameTheField(client, origin));
    test('cancellation rejects promptly, the lookup is abandoned and the server keeps serving', () =>
      cases.cancellation(client, origin, { strictNoLateAnswer: false, originSeesAbandon: true }));
  });
}

function raw(method, headers, body, { tcp = true } = {}) {
  return new Promise((resolve, reject) => {
    const target = tcp ? { host: '127.0.0.1', port: broker.tcpPort } : { socketPath: broker.socket };
    const req = http.request({ ...target, path: '/mcp', method, setHost: false,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('transport guards', () => {
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const auth = () => ({ Authorization: `Bearer ${broker.token}` });
  test('a wrong or missing bearer token is refused on TCP', async () => {
    assert.equal((await raw('POST', { Host: `127.0.0.1:${broker.tcpPort}` }, ping)).status, 403);
    assert.equal((await raw('POST', { Host: `127.0.0.1:${broker.tcpPort}`, Authorization: 'Bearer nope' }, ping)).status, 403);
    await assert.rejects(connectTcp('nope'));
  });
  test('DNS rebinding: a foreign Host or Origin is refused before any work', async () => {
    assert.equal((await raw('POST', { ...auth(), Host: 'attacker.example' }, ping)).status, 403);
    assert.equal((await raw('POST', { ...auth(), Host: `attacker.example:${broker.tcpPort}` }, ping)).status, 403);
    assert.equal((await raw('POST', { ...auth(), Host: `127.0.0.1:${broker.tcpPort}`, Origin: 'http://attacker.example' }, ping)).status, 403);
    assert.equal((await raw('POST', { ...auth(), Host: `localhost:${broker.tcpPort}`, Origin: `http://localhost:${broker.tcpPort}` }, ping)).status, 200);
    assert.equal((await raw('POST', { Host: 'attacker.example' }, ping, { tcp: false })).status, 403);
  });
  test('POST only; notifications get 202; bad JSON and batches get JSON-RPC errors', async () => {
    const host = { ...auth(), Host: `127.0.0.1:${broker.tcpPort}` };
    const get = await raw('GET', host);
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    const note = await raw('POST', host, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    assert.equal(note.status, 202);
    assert.equal(note.text, '');
    const bad = await raw('POST', host, '{"jsonrpc":');
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text).error.code, -32700);
    const batch = await raw('POST', host, `[${ping}]`);
    assert.equal(JSON.parse(batch.text).error.code, -32600);
    const version = await raw('POST', { ...host, 'MCP-Protocol-Version': '1999-01-01' }, ping);
    assert.equal(version.status, 400);
    const big = await raw('POST', host, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(70000) } }));
    assert.equal(big.status, 413);
  });
});
