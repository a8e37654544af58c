// Runs the README's "Use it from…" snippets (blocks marked readme-test)
// against the real verifetchd and a loopback origin, with the real clients.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_ROOT, GOOD_TEXT, SOURCE_ROOT, startBroker, startOrigin } from './env.mjs';

const run = promisify(execFile);
const README = readFileSync(path.join(SOURCE_ROOT, 'README.md'), 'utf8');
const NPM_DIR = path.join(SOURCE_ROOT, 'packaging', 'npm');

function snippet(name) {
  const m = README.match(new RegExp(`<!-- readme-test: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``));
  assert.ok(m, `README has no readme-test block ${name}`);
  return m[1];
}

let broker, origin, work, pageUrl;
const localize = (text) => text.replaceAll('https://www.debian.org/', pageUrl);

before(async () => {
  origin = await startOrigin();
  broker = await startBroker({ tcp: false });
  work = mkdtempSync(path.join(tmpdir(), 'vf-readme-'));
  pageUrl = origin.url('/page');
});
after(async () => {
  await broker?.stop();
  await origin?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Concatenated JSON documents (curl prints no newlines) → array. */
function splitJson(text) {
  const docs = [];
  let depth = 0, start = -1, inString = false, escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') { if (depth++ === 0) start = i; }
    else if (ch === '}' && --depth === 0) docs.push(JSON.parse(text.slice(start, i + 1)));
  }
  return docs;
}

test('MCP host config: the host launches verifetch mcp and calls the tool', async () => {
  const server = JSON.parse(snippet('mcp-host-config')).mcpServers.verifetch;
  assert.equal(server.command, 'verifetch');
  const transport = new StdioClientTransport({ command: server.command, args: server.args, stderr: 'pipe',
    env: { ...server.env, VERIFETCH_SOCKET: broker.socket, PATH: `${path.join(BUILD_ROOT, 'cli')}:${process.env.PATH}` } });
  const client = new Client({ name: 'readme-host', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: tools[0].name, arguments: { url: pageUrl } });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.ok, true);
  await client.close();
});

test('Python Strands snippet', async () => {
  const stub = path.join(work, 'py');
  mkdirSync(path.join(stub, 'strands'), { recursive: true });
  // Stand-in strands: tool() leaves the function as is; Agent calls the tool once with the prompt's URL.
  writeFileSync(path.join(stub, 'strands', '__init__.py'), [
    'import json, re',
    'def tool(func=None, *, name=None, **_):',
    '    return func if func is not None else (lambda f: f)',
    'class Agent:',
    '    def __init__(self, tools):',
    '        self.tools = tools',
    '    def __call__(self, prompt):',
    '        url = re.search(r"https?://\\S+", prompt).group(0).rstrip(".,")',
    '        result = self.tools[0](url=url)',
    '        print(json.dumps(result))',
    '        return result',
  ].join('\n'));
  const { stdout } = await run('python3', ['-c', localize(snippet('python-strands'))], {
    env: { ...process.env, VERIFETCH_SOCKET: broker.socket,
      PYTHONPATH: `${stub}:${path.join(SOURCE_ROOT, 'packaging', 'python')}` } });
  const result = JSON.parse(stdout);
  assert.equal(result.status, 'success');
  assert.equal(result.content[0].json.ok, true);
  assert.ok(result.content[1].text.includes(GOOD_TEXT));
});

test('TypeScript Strands snippet (scripted model, real agent loop)', async () => {
  const dir = path.join(work, 'ts');
  mkdirSync(path.join(dir, 'node_modules', '@strands-agents'), { recursive: true });
  symlinkSync(NPM_DIR, path.join(dir, 'node_modules', 'verifetch'));
  symlinkSync(path.join(NPM_DIR, 'node_modules', '@strands-agents', 'sdk'), path.join(dir, 'node_modules', '@strands-agents', 'sdk'));
  // The model is the only thing swapped: it calls the tool with the prompt's URL, then prints what it was shown.
  const scripted = `
import { Model as __Model } from '@strands-agents/sdk';
globalThis.__model = new (class extends __Model {
  getConfig() { return { modelId: 'scripted' }; }
  updateConfig() {}
  async *stream(messages) {
    const last = messages[messages.length - 1];
    const shown = last.content.find((b) => b.type === 'toolResultBlock');
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    if (shown) {
      console.log(JSON.stringify({ status: shown.status, receipt: shown.content[0].json, text: shown.content[1].text }));
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: 'done' } };
      yield { type: 'modelContentBlockStopEvent' };
      yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' };
      return;
    }
    const url = last.content.find((b) => b.type === 'textBlock').text.match(/https?:\\/\\/\\S+/)[0].replace(/[.,]$/, '');
    yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: 'verified_web_lookup', toolUseId: 't1' } };
    yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify({ url }) } };
    yield { type: 'modelContentBlockStopEvent' };
    yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' };
  }
})();
`;
  const code = snippet('typescript-strands');
  assert.ok(code.includes('new Agent({ '), 'the snippet builds an Agent');
  const file = path.join(dir, 'snippet.mjs');
  writeFileSync(file, scripted + localize(code).replace('new Agent({ ', 'new Agent({ model: globalThis.__model, printer: false, '));
  const { stdout } = await run(process.execPath, [file], { env: { ...process.env, VERIFETCH_SOCKET: broker.socket } });
  const shown = JSON.parse(stdout.trim().split('\n').pop());
  assert.equal(shown.status, 'success');
  assert.equal(shown.receipt.ok, true);
  assert.ok(shown.text.includes(GOOD_TEXT));
});

test('plain HTTP snippet', async () => {
  const { stdout } = await run('bash', ['-c', localize(snippet('plain-http'))],
    { env: { ...process.env, VERIFETCH_SOCKET: broker.socket } });
  const [spec, lookup, mcp] = splitJson(stdout);
  assert.equal(spec.function.name, 'verified_web_lookup');
  assert.equal(lookup.status, 'success');
  assert.equal(lookup.content[0].json.ok, true);
  assert.equal(mcp.result.isError, false);
  assert.equal(mcp.result.structuredContent.ok, true);
});

test('try it on this machine: loopback page, three-line config', async () => {
  const dir = path.join(work, 'try');
  const port = String(await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  }));
  // Paths and the port are the test's own; the commands run from the source tree as written.
  const script = snippet('try-it').replaceAll('/tmp/vf-try', dir).replaceAll('8000', port)
    .replaceAll('build/broker/', `${path.join(BUILD_ROOT, 'broker')}/`).replaceAll('build/cli/', `${path.join(BUILD_ROOT, 'cli')}/`)
    .replace('sleep 1;', `for i in $(seq 200); do [ -S ${dir}/verifetch.sock ] && (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.1; done;`);
  const { stdout } = await run('bash', ['-c', `${script}\nstatus=$?; kill %1 %2 2>/dev/null; wait; exit $status`],
    { cwd: SOURCE_ROOT, timeout: 30000 });
  assert.ok(stdout.includes('Hello from a page on this machine'), stdout);
});
