// Contender (e) of the benchmark (issue 15): verifetch's MCP server against a
// real MCP fetch server from npm, both driven by the MCP SDK's stdio client,
// the same calls on the same pages in interleaved rounds. run.sh starts the
// origin and verifetchd and passes their addresses; see tests/bench/README.md.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const opt = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
for (const need of ['cli', 'socket', 'broker-pid', 'base', 'out'])
  if (!opt[need]) throw new Error(`missing --${need}=...`);
const rounds = Math.max(1, Math.min(9, Number(opt.rounds ?? 3)));
const scale = Number(opt.scale ?? 1);
const MARK = 'Paragraph 0:';
const MAX_CHARS = 1000000; // verifetch's ceiling; the npm server gets the same cut

// Calls per round and page: enough for a median, few enough that the slow
// contenders finish a 1 MiB round in seconds.
const pages = [
  { name: '10k', path: '/10k', calls: Math.max(3, Math.round(20 * scale)) },
  { name: '1m', path: '/1m', calls: Math.max(2, Math.round(4 * scale)) },
];

const require = createRequire(import.meta.url);
const npmServer = require.resolve('mcp-fetch-server/dist/index.js');

const contenders = [
  {
    name: 'verifetch',
    command: opt.cli,
    args: ['mcp'],
    env: { VERIFETCH_SOCKET: opt.socket },
    tool: 'verified_web_lookup',
    args_for: (url) => ({ url, max_chars: MAX_CHARS }),
    treePids: (serverPid) => [serverPid, Number(opt['broker-pid'])],
  },
  {
    name: 'mcp-fetch-server readable',
    command: process.execPath,
    args: [npmServer],
    env: {},
    tool: 'fetch_readable',
    args_for: (url) => ({ url, max_length: MAX_CHARS }),
    treePids: (serverPid) => [serverPid],
  },
  {
    name: 'mcp-fetch-server txt',
    command: process.execPath,
    args: [npmServer],
    env: {},
    tool: 'fetch_txt',
    args_for: (url) => ({ url, max_length: MAX_CHARS }),
    treePids: (serverPid) => [serverPid],
  },
];

const TICK_MS = 1000 / 100; // USER_HZ on Linux

// CPU of a process and everything under it, in ms: its own time, the time
// of children it has reaped, and the same for its live children.
function treeCpuMs(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let ms = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
  for (const task of readdirSync(`/proc/${pid}/task`, { withFileTypes: false })) {
    let kids = '';
    try {
      kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const kid of kids.split(' ').filter(Boolean)) ms += treeCpuMs(Number(kid));
  }
  return ms;
}

function textOf(result) {
  return (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

async function connect(c) {
  const transport = new StdioClientTransport({
    command: c.command,
    args: c.args,
    env: { ...process.env, ...c.env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'verifetch-bench', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

// One cell: n calls, one after another (c=1, as an agent's tool calls go).
async function cell(c, conn, url, n) {
  const pids = c.treePids(conn.transport.pid);
  const cpu0 = pids.reduce((s, p) => s + treeCpuMs(p), 0);
  const walls = [];
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const result = await conn.client.callTool({ name: c.tool, arguments: c.args_for(url) }, undefined, {
      timeout: 120000,
    });
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const text = textOf(result);
    if (result.isError || !text.includes(MARK))
      throw new Error(`${c.name} ${url}: not a usable answer: ${text.slice(0, 300)}`);
    chars = text.length;
  }
  const cpu = pids.reduce((s, p) => s + treeCpuMs(p), 0) - cpu0;
  return { walls, cpu, chars };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const conns = [];
for (const c of contenders) conns.push(await connect(c));
// One untimed call each so no contender pays its start-up inside a cell.
for (const [i, c] of contenders.entries()) await cell(c, conns[i], opt.base + '/10k', 1);

// CPU is summed over all rounds before dividing: /proc counts in 10 ms ticks.
const results = {}; // page -> contender -> { roundMedians, walls, cpuMs, calls, chars }
for (let r = 0; r < rounds; r++) {
  for (const [pi, page] of pages.entries()) {
    const order = contenders.map((_, i) => i);
    const shift = (r + pi) % order.length; // rotated by round and page
    const rotated = order.slice(shift).concat(order.slice(0, shift));
    for (const i of rotated) {
      const c = contenders[i];
      const got = await cell(c, conns[i], opt.base + page.path, page.calls);
      const slot = ((results[page.name] ??= {})[c.name] ??= { roundMedians: [], walls: [], cpuMs: 0, calls: 0, chars: 0 });
      slot.roundMedians.push(median(got.walls));
      slot.walls.push(...got.walls);
      slot.cpuMs += got.cpu;
      slot.calls += got.walls.length;
      slot.chars = got.chars;
      console.error(`mcp bench: round ${r + 1} ${page.name} ${c.name}: median ${median(got.walls).toFixed(2)} ms, ` +
        `CPU ${got.cpu} ms in ${got.walls.length} calls, ${got.chars} chars`);
    }
  }
}
for (const conn of conns) await conn.client.close();

const report = { rounds, pages: {} };
const lines = ['page  contender                    p50 ms [round medians min-max]  CPU ms/call   chars     vs verifetch (p50, CPU)'];
for (const page of pages) {
  const mine = results[page.name].verifetch;
  const base = { p50: median(mine.walls), cpu: mine.cpuMs / mine.calls };
  for (const c of contenders) {
    const s = results[page.name][c.name];
    const p50 = median(s.walls);
    const cpu = s.cpuMs / s.calls;
    report.pages[page.name] ??= {};
    report.pages[page.name][c.name] = {
      p50_ms: p50, round_medians_ms: s.roundMedians, cpu_ms_per_call: cpu, chars: s.chars,
      p50_ratio_to_verifetch: p50 / base.p50, cpu_ratio_to_verifetch: cpu / base.cpu,
    };
    const mm = `[${Math.min(...s.roundMedians).toFixed(1)}-${Math.max(...s.roundMedians).toFixed(1)}]`;
    lines.push(`${page.name.padEnd(5)} ${c.name.padEnd(28)} ${p50.toFixed(2).padStart(9)} ${mm.padEnd(17)} ` +
      `${cpu.toFixed(2).padStart(10)} ${String(s.chars).padStart(9)}     ` +
      `${(p50 / base.p50).toFixed(2)}x, ${(cpu / base.cpu).toFixed(2)}x`);
  }
}
console.log(lines.join('\n'));
writeFileSync(opt.out, JSON.stringify(report, null, 2) + '\n');
