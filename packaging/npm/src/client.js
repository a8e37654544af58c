// A dependency-free client for verifetchd: POST /v1/lookup and GET
// /v1/tool-spec over the unix socket (default) or the loopback TCP listener
// with a bearer token. Answers are the broker's Strands ToolResult, untouched.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const MAX_ANSWER = 64 * 1024 * 1024;

/** A refusal (HTTP 4xx/5xx with {error:{field,message}}) or a connection problem. */
export class VerifetchError extends Error {
  constructor(message, { status = 0, field = '', retryAfter = 0, code = '' } = {}) {
    super(message);
    this.name = 'VerifetchError';
    this.status = status;
    this.field = field;
    this.retryAfter = retryAfter;
    this.code = code;
  }
}

/** Where verifetchd listens by default: $VERIFETCH_SOCKET, else the daemon's own default. */
export function defaultSocketPath(env = process.env) {
  if (env.VERIFETCH_SOCKET) return env.VERIFETCH_SOCKET;
  if (process.getuid?.() === 0) return '/run/verifetch/verifetch.sock';
  if (env.XDG_RUNTIME_DIR?.startsWith('/')) return path.join(env.XDG_RUNTIME_DIR, 'verifetch.sock');
  return path.join(os.tmpdir() === '/tmp' ? '/tmp' : os.tmpdir(), `verifetch-${process.getuid?.() ?? 0}`, 'verifetch.sock');
}

function explain(err, where) {
  if (err.code === 'ENOENT') return `no such socket: ${where} (is verifetchd running? set VERIFETCH_SOCKET)`;
  if (err.code === 'EACCES' || err.code === 'EPERM') return `permission denied: ${where}`;
  if (err.code === 'ECONNREFUSED') return `connection refused: ${where} (verifetchd is not running)`;
  return `cannot reach verifetchd at ${where}: ${err.message}`;
}

export class VerifetchClient {
  /**
   * @param {{socketPath?: string, url?: string, token?: string, timeoutMs?: number}} [options]
   *   url (e.g. "http://127.0.0.1:8089") + token selects the TCP listener; otherwise the unix socket.
   */
  constructor(options = {}) {
    this.url = options.url ? new URL(options.url) : null;
    this.socketPath = this.url ? null : (options.socketPath ?? defaultSocketPath());
    this.token = options.token ?? null;
    this.timeoutMs = options.timeoutMs ?? 120000;
  }

  /** The ToolResult {status, content:[{json: receipt}, {text}]} for one lookup. */
  lookup(args, { signal } = {}) {
    return this.#request('POST', '/v1/lookup', JSON.stringify(args), signal);
  }

  /** The model-facing tool spec; format: undefined | "bedrock" | "json-schema" | "openai" | "mcp". */
  toolSpec(format) {
    return this.#request('GET', `/v1/tool-spec${format ? `?format=${encodeURIComponent(format)}` : ''}`, null);
  }

  #request(method, pathname, body, signal) {
    const where = this.url ? this.url.origin : this.socketPath;
    const target = this.url
      ? { host: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port || 80 }
      : { socketPath: this.socketPath };
    const headers = { Accept: 'application/json' };
    if (body !== null) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(body);
    }
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    return new Promise((resolve, reject) => {
      const req = http.request({ ...target, method, path: pathname, headers, timeout: this.timeoutMs, signal }, (res) => {
        const chunks = [];
        let size = 0;
        res.on('data', (c) => {
          size += c.length;
          if (size > MAX_ANSWER) req.destroy(new VerifetchError('answer larger than 64 MiB'));
          else chunks.push(c);
        });
        res.on('end', () => {
          let doc;
          try {
            doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reject(new VerifetchError(`verifetchd answered HTTP ${res.statusCode} with invalid JSON`, { status: res.statusCode }));
          }
          if (res.statusCode === 200) return resolve(doc);
          const e = doc?.error ?? {};
          reject(new VerifetchError(`verifetchd refused (HTTP ${res.statusCode}): ${e.field ? `${e.field}: ` : ''}${e.message ?? 'no message'}`,
            { status: res.statusCode, field: e.field ?? '', retryAfter: Number(res.headers['retry-after'] ?? e.retry_after ?? 0) }));
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new VerifetchError(`no answer from ${where} within ${this.timeoutMs} ms`, { code: 'ETIMEDOUT' })));
      req.on('error', (err) => reject(err instanceof VerifetchError || err.name === 'AbortError'
        ? err : new VerifetchError(explain(err, where), { code: err.code ?? '' })));
      req.end(body ?? undefined);
    });
  }
}
