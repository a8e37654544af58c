// Test environment for the node-based tests: a loopback origin, the real
// verifetchd (real workers) on a private unix socket and loopback TCP port,
// and small adapters so unmodified npm clients can reach a unix socket.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SOURCE_ROOT = process.env.VERIFETCH_SOURCE_ROOT || path.resolve(here, '../..');
export const BUILD_ROOT = process.env.VERIFETCH_BUILD_ROOT || path.join(SOURCE_ROOT, 'build');
export const CLI = path.join(BUILD_ROOT, 'cli/verifetch');

export const GOOD_TEXT = 'Verifetch loopback origin. This page has enough readable words to count as usable content.';
// What Cloudflare's JS challenge serves: a bot wall, however fast and 200 it is.
export const WALL_HTML = '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head>' +
  '<body><div class="main-wrapper"><h1>example.com</h1><h2>Checking if the site connection is secure</h2>' +
  '<noscript>Enable JavaScript and cookies to continue</noscript>' +
  '<p>example.com needs to review the security of your connection before proceeding.</p></div></body></html>';

/** A loopback origin: /page (usable), /wall and /wall200 (Cloudflare challenge), /slow (answers after ms=). */
export async function startOrigin() {
  const closedEarly = [];   // /slow requests whose connection closed before the answer
  const opened = [];        // /slow requests received
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/page') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<html><head><title>Loopback</title></head><body><p>${GOOD_TEXT}</p></body></html>`);
    } else if (url.pathname === '/wall' || url.pathname === '/wall200') {
      // Cloudflare serves its challenge as 403 with cf-mitigated; /wall200 is the same page as a 200.
      res.writeHead(url.pathname === '/wall' ? 403 : 200,
        { 'Content-Type': 'text/html; charset=utf-8', 'cf-mitigated': 'challenge' });
      res.end(WALL_HTML);
    } else if (url.pathname === '/slow') {
      opened.push(req.url);
      const timer = setTimeout(() => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(GOOD_TEXT);
      }, Number(url.searchParams.get('ms') || 3000));
      res.on('close', () => { if (!res.writableEnded) closedEarly.push(req.url); clearTimeout(timer); });
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    port,
    url: (p) => `http://127.0.0.1:${port}${p}`,
    closedEarly,
    opened,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}

async function freePort() {
  const s = net.createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = s.address().port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

function socketAccepts(p) {
  return new Promise((resolve) => {
    const c = net.connect(p);
    c.on('connect', () => { c.destroy(); resolve(true); });
    c.on('error', () => resolve(false));
  });
}

/** The real verifetchd with one tenant (this uid on the socket, a bearer token on TCP). */
export async function startBroker({ tcp = true, extraTenant = '' } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'vf-mcp-'));
  const socket = path.join(dir, 'v.sock');
  const token = randomBytes(16).toString('hex');
  const tcpPort = tcp ? await freePort() : 0;
  const hash = createHash('sha256').update(token).digest('hex');
  const conf = path.join(dir, 'verifetch.conf');
  writeFileSync(conf, [
    `listen = { socket = "${socket}"; mode = 0600;${tcp ? ` tcp = "127.0.0.1:${tcpPort}";` : ''} };`,
    `worker = { path = "${path.join(BUILD_ROOT, 'worker/verifetch-worker')}"; ca_file = "/etc/ssl/certs/ca-certificates.crt"; };`,
    'tenants = (',
    `  { name = "mcp"; uids = [ ${process.getuid()} ];${tcp ? ` tokens = [ "sha256:${hash}" ];` : ''}`,
    '    timeout_ms = 5000;',
    '    egress = { allow = [ "127.0.0.1/32" ]; any_port = true; };',
    '    providers = ( { name = "direct"; kind = "direct"; } ); }',
    extraTenant,
    ');',
  ].join('\n'));
  const errPath = path.join(dir, 'broker.err');
  const child = spawn(path.join(BUILD_ROOT, 'broker/verifetchd'), ['--config', conf], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const deadline = Date.now() + 10000;
  while (!(await socketAccepts(socket))) {
    if (child.exitCode !== null) throw new Error(`verifetchd exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`verifetchd not ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    dir, socket, token, tcpPort, conf,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      writeFileSync(errPath, stderr);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** fetch() over a unix socket, for clients that accept a custom fetch (the MCP SDK does). */
export function unixFetch(socketPath) {
  return (input, init = {}) => new Promise((resolve, reject) => {
    const url = new URL(typeof input === 'string' ? input : input.url ?? String(input));
    const headers = {};
    new Headers(init.headers || {}).forEach((v, k) => { headers[k] = v; });
    const req = http.request({ socketPath, path: url.pathname + url.search, method: init.method || 'GET',
      headers: { host: 'localhost', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        const body = [204, 304].includes(res.statusCode) ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status: res.statusCode, headers: h }));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.signal) {
      if (init.signal.aborted) return req.destroy(new DOMException('aborted', 'AbortError'));
      init.signal.addEventListener('abort', () => req.destroy(new DOMException('aborted', 'AbortError')));
    }
    req.end(init.body ?? undefined);
  });
}

/** A loopback TCP port that relays bytes to the unix socket unchanged (for tools that only take a URL). */
export async function startUnixRelay(socketPath) {
  const server = net.createServer((c) => {
    const u = net.connect(socketPath);
    c.pipe(u).pipe(c);
    c.on('error', () => u.destroy());
    u.on('error', () => c.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

export function readJson(p) {
  return JSON.parse(readFileSync(p, 'utf8'));
}

export { existsSync };
