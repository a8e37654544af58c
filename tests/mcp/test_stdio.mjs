// `verifetch mcp` (stdio) driven by the real @modelcontextprotocol/sdk client.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, startBroker, startOrigin } from './env.mjs';
import * as cases from './cases.mjs';

let broker, origin, client, transport;

before(async () => {
  origin = await startOrigin();
  broker = await startBroker({ tcp: false });
  // The socket comes from $VERIFETCH_SOCKET, as a host's MCP config would set it.
  transport = new StdioClientTransport({ command: CLI, args: ['mcp'], stderr: 'pipe',
    env: { PATH: process.env.PATH, VERIFETCH_SOCKET: broker.socket } });
  client = new Client({ name: 'verifetch-tests', version: '1' });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  await broker?.stop();
  await origin?.close();
});

test('initialize negotiates the SDK\'s protocol version and names the server', () => {
  assert.equal(client.getServerVersion().name, 'verifetch');
  assert.ok(client.getServerCapabilities().tools);
  assert.match(client.getInstructions(), /isError/);
});
test('tools/list', () => cases.listsTheTool(client));
test('tools/call success', () => cases.callSucceeds(client, origin));
test('tools/call on a Cloudflare wall is isError with the receipt', () => cases.wallIsAnError(client, origin));
test('bad arguments are -32602 naming the field', () => cases.badArgumentsNameTheField(client, origin));
test('ping', async () => assert.deepEqual(await client.ping(), {}));
test('progress is reported when asked for', async () => {
  const seen = [];
  const r = await client.callTool({ name: 'verified_web_lookup', arguments: { url: origin.url('/page') } },
    undefined, { onprogress: (p) => seen.push(p) });
  assert.equal(r.isError, false);
  assert.ok(seen.length >= 1 && seen[0].total === 1, JSON.stringify(seen));
});
test('cancellation: prompt, no late answer, the forwarded lookup is abandoned', async () => {
  await cases.cancellation(client, origin, { strictNoLateAnswer: true, originSeesAbandon: true });
});
test('a missing socket is a clear JSON-RPC error, not a crash', async () => {
  const t = new StdioClientTransport({ command: CLI, args: ['mcp', '--socket', `${broker.dir}/nope.sock`],
    stderr: 'pipe', env: { PATH: process.env.PATH } });
  const c = new Client({ name: 'verifetch-tests', version: '1' });
  await c.connect(t);
  await assert.rejects(c.listTools(), (e) => e.code === -32001 && /no such socket/.test(e.message));
  await c.close();
});
