// VerifiedWebLookupTool in the real @strands-agents/sdk agent loop, with a
// scripted model: it asks for a lookup, then records the tool result it is
// shown. A wall must reach the model as an error that carries the receipt.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Model } from '@strands-agents/sdk';
import { VerifetchClient } from '../src/client.js';
import { VerifiedWebLookupTool } from '../src/strands.js';
import { GOOD_TEXT, startBroker, startOrigin } from '../../../tests/mcp/env.mjs';

/** Turn 1: call verified_web_lookup with `input`. Turn 2: note the tool result, end the turn. */
class ScriptedModel extends Model {
  constructor(input) {
    super();
    this.input = input;
    this.seen = null;
    this.config = { modelId: 'scripted' };
  }
  updateConfig(c) { this.config = { ...this.config, ...c }; }
  getConfig() { return this.config; }
  async *stream(messages) {
    const last = messages[messages.length - 1];
    const toolResult = last?.content?.find((b) => b.type === 'toolResultBlock');
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    if (!toolResult) {
      yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: 'verified_web_lookup', toolUseId: 't1' } };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify(this.input) } };
      yield { type: 'modelContentBlockStopEvent' };
      yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' };
      return;
    }
    this.seen = toolResult;
    yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: 'noted' } };
    yield { type: 'modelContentBlockStopEvent' };
    yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' };
  }
}

let broker, origin, client;
before(async () => {
  origin = await startOrigin();
  broker = await startBroker({ tcp: false });
  client = new VerifetchClient({ socketPath: broker.socket });
});
after(async () => {
  await broker?.stop();
  await origin?.close();
});

async function run(input) {
  const model = new ScriptedModel(input);
  const agent = new Agent({ model, tools: [await VerifiedWebLookupTool.fromBroker(client)], printer: false });
  await agent.invoke('look it up');
  assert.ok(model.seen, 'the model was shown a tool result');
  return model.seen;
}

test('a usable page reaches the model as success with receipt and text', async () => {
  const seen = await run({ url: origin.url('/page') });
  assert.equal(seen.status, 'success');
  assert.equal(seen.content[0].type, 'jsonBlock');
  assert.equal(seen.content[0].json.ok, true);
  assert.equal(seen.content[1].type, 'textBlock');
  assert.ok(seen.content[1].text.includes(GOOD_TEXT));
});

test('a Cloudflare wall reaches the model as an error with the receipt', async () => {
  const seen = await run({ url: origin.url('/wall') });
  assert.equal(seen.status, 'error');
  assert.equal(seen.content[0].json.ok, false);
  assert.equal(seen.content[0].json.failure_reason, 'all_providers_failed');
  assert.match(seen.content[1].text, /^LOOKUP FAILED:/);
});

test('bad input reaches the model as an error naming the field', async () => {
  const seen = await run({ url: 'ftp://example.com/' });
  assert.equal(seen.status, 'error');
  assert.match(seen.content[0].text, /LOOKUP FAILED: bad_request: url/);
});

test('the tool spec is the tenant\'s model-facing inputs', async () => {
  const tool = await VerifiedWebLookupTool.fromBroker(client);
  for (const k of ['url', 'must_contain', 'min_chars', 'max_attempts']) assert.ok(k in tool.toolSpec.inputSchema.properties, k);
});
