// The MCP behaviours every transport must show, run with the real SDK client.
import assert from 'node:assert/strict';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { GOOD_TEXT } from './env.mjs';

const TOOL = 'verified_web_lookup';

export async function listsTheTool(client) {
  const { tools } = await client.listTools();
  assert.equal(tools.length, 1);
  const t = tools[0];
  assert.equal(t.name, TOOL);
  for (const k of ['url', 'must_contain', 'min_chars', 'max_attempts']) assert.ok(k in t.inputSchema.properties, k);
  assert.deepEqual(t.inputSchema.required, ['url']);
  assert.equal(t.annotations.readOnlyHint, true);
  assert.equal(t.annotations.openWorldHint, true);
  // Open on purpose: the receipt gains additive fields.
  assert.equal(t.outputSchema.additionalProperties, true);
  assert.equal(t.outputSchema.type, 'object');
}

function receiptOf(result) {
  assert.equal(result.content.length, 2, 'receipt text + page text / LOOKUP FAILED line');
  assert.equal(result.content[0].type, 'text');
  const fromText = JSON.parse(result.content[0].text);
  assert.deepEqual(fromText, result.structuredContent, 'the receipt travels as text too');
  return result.structuredContent;
}

export async function callSucceeds(client, origin) {
  await client.listTools(); // the SDK validates structuredContent against the listed outputSchema
  const result = await client.callTool({ name: TOOL, arguments: { url: origin.url('/page'), must_contain: 'loopback' } });
  assert.equal(result.isError, false);
  const receipt = receiptOf(result);
  assert.equal(receipt.schema, 'verified_web_lookup.receipt/v1');
  assert.equal(receipt.ok, true);
  assert.equal(receipt.provider_used, 'direct');
  assert.equal(receipt.tenant, 'mcp', 'an additive field passed the client-side schema check');
  assert.ok(result.content[1].text.includes(GOOD_TEXT), result.content[1].text);
}

export async function wallIsAnError(client, origin) {
  await client.listTools();
  const result = await client.callTool({ name: TOOL, arguments: { url: origin.url('/wall') } });
  assert.equal(result.isError, true, 'a Cloudflare challenge is never success');
  const receipt = receiptOf(result);
  assert.equal(receipt.ok, false);
  assert.equal(receipt.failure_reason, 'all_providers_failed');
  assert.ok(['http_error', 'unusable_content'].includes(receipt.attempts_log[0].outcome), receipt.attempts_log[0].outcome);
  assert.match(result.content[1].text, /^LOOKUP FAILED:/);
  assert.ok(!result.content[1].text.includes('Checking if the site'), 'no wall text reaches the model');
  // The same challenge relayed with status 200 (as fetch APIs do) is judged a wall too.
  const relayed = await client.callTool({ name: TOOL, arguments: { url: origin.url('/wall200') } });
  assert.equal(relayed.isError, true, 'a Cloudflare challenge at 200 is never success');
  const relayedReceipt = receiptOf(relayed);
  assert.equal(relayedReceipt.attempts_log[0].outcome, 'unusable_content');
  assert.equal(relayedReceipt.attempts_log[0].wall, 'bot_challenge');
}

export async function badArgumentsNameTheField(client, origin) {
  for (const [args, field] of [[{ url: 'ftp://example.com/' }, 'url'], [{ url: origin.url('/page'), colour: 'red' }, 'colour'],
    [{ url: origin.url('/page'), min_chars: 'many' }, 'min_chars'], [{}, 'url']]) {
    await assert.rejects(client.callTool({ name: TOOL, arguments: args }), (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32602);
      assert.ok(e.message.includes(`'${field}'`), `${e.message} should name ${field}`);
      assert.equal(e.data?.field, field);
      return true;
    });
  }
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (e) => e.code === -32602);
}

/** Cancel a slow lookup: the call rejects at once and the server keeps serving.
 *  With strictNoLateAnswer, no response for the cancelled id may arrive later.
 *  With originSeesAbandon, the broker must give the lookup up: the origin sees
 *  its connection closed before it answered (it answers after 2 s). */
export async function cancellation(client, origin, { strictNoLateAnswer, originSeesAbandon = false }) {
  const errors = [];
  const previous = client.onerror;
  client.onerror = (e) => errors.push(e);
  const ac = new AbortController();
  const started = Date.now();
  const slowPath = `/slow?ms=2000&c=${started}`;
  const call = client.callTool({ name: TOOL, arguments: { url: origin.url(slowPath) } }, undefined,
    { signal: ac.signal });
  // Abort once the lookup is waiting on the origin.
  while (!origin.opened.includes(slowPath) && Date.now() - started < 1500)
    await new Promise((r) => setTimeout(r, 20));
  assert.ok(origin.opened.includes(slowPath), 'the lookup reached the origin before it was cancelled');
  ac.abort();
  await assert.rejects(call, (e) => e.name === 'AbortError' || /abort/i.test(String(e)));
  assert.ok(Date.now() - started < 1500, 'cancellation is prompt');
  if (originSeesAbandon) {
    while (!origin.closedEarly.includes(slowPath) && Date.now() - started < 1800)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(origin.closedEarly.includes(slowPath),
      `the origin's connection was not closed early: the broker kept the cancelled lookup (${origin.closedEarly})`);
  }
  const next = await client.callTool({ name: TOOL, arguments: { url: origin.url('/page') } });
  assert.equal(next.isError, false);
  if (strictNoLateAnswer) {
    await new Promise((r) => setTimeout(r, Math.max(0, 2600 - (Date.now() - started))));
    assert.deepEqual(errors.map(String), [], 'no late answer for the cancelled request');
  }
  client.onerror = previous;
}
