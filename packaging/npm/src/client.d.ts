export interface Receipt {
  schema: string; ok: boolean; url: string; attempts: number; max_attempts: number;
  providers_available: number; provider_used: string | null; fallback_used: boolean;
  failure_reason: string | null; content_chars: number;
  attempts_log: Array<{ provider: string; outcome: string; http_status: number | null; detail: string | null; [k: string]: unknown }>;
  [additive: string]: unknown;
}
export interface ToolResult {
  status: 'success' | 'error';
  content: [{ json: Receipt }, { text: string }];
}
export interface LookupArgs { url: string; must_contain?: string; min_chars?: number; max_attempts?: number; [k: string]: unknown }
export declare class VerifetchError extends Error {
  status: number; field: string; retryAfter: number; code: string;
}
export declare function defaultSocketPath(env?: Record<string, string | undefined>): string;
export declare class VerifetchClient {
  constructor(options?: { socketPath?: string; url?: string; token?: string; timeoutMs?: number });
  readonly socketPath: string | null;
  lookup(args: LookupArgs, options?: { signal?: AbortSignal }): Promise<ToolResult>;
  toolSpec(format?: 'bedrock' | 'json-schema' | 'openai' | 'mcp'): Promise<Record<string, unknown>>;
}
