// verified_web_lookup as a Strands Agents TypeScript Tool. The TS SDK has no
// dict passthrough for tool results, so the ToolResultBlock is built here:
// status from the lookup (a wall or error page is 'error', never success),
// the receipt as a JSON block and the page text or LOOKUP FAILED line as text.
import { JsonBlock, TextBlock, Tool, ToolResultBlock } from '@strands-agents/sdk';
import { VerifetchClient, VerifetchError } from './client.js';

// The same model-facing inputs as GET /v1/tool-spec (fromBroker() fetches the tenant's own).
const DEFAULT_SPEC = {
  name: 'verified_web_lookup',
  description: 'Fetch a web page and report, in a machine-readable receipt, whether the content is actually usable '
    + '(not a cookie wall, empty page or error). The first content block is the receipt; the second is the page '
    + 'text or a LOOKUP FAILED line.',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'Absolute http:// or https:// URL of the page to fetch.' },
      must_contain: { type: 'string', description: 'Text the page must contain (case-sensitive) to count as usable.' },
      min_chars: { type: 'integer', minimum: 0, default: 40, description: 'Minimum readable characters for the page to count as usable.' },
      max_attempts: { type: 'integer', minimum: 1, description: "How many providers may be tried; clamped to the operator's ceiling." },
    },
    required: ['url'],
    additionalProperties: false,
  },
};

export class VerifiedWebLookupTool extends Tool {
  /** @param {{client?: VerifetchClient, toolSpec?: object}} [options] */
  constructor(options = {}) {
    super();
    this.client = options.client ?? new VerifetchClient();
    this.toolSpec = options.toolSpec ?? DEFAULT_SPEC;
    this.name = this.toolSpec.name;
    this.description = this.toolSpec.description;
  }

  /** A tool whose input schema is the broker's for this tenant (its attempt ceiling included). */
  static async fromBroker(client = new VerifetchClient()) {
    const spec = await client.toolSpec();
    return new VerifiedWebLookupTool({ client,
      toolSpec: { name: spec.name, description: spec.description, inputSchema: spec.inputSchema.json } });
  }

  async *stream(context) {
    const toolUseId = context.toolUse.toolUseId;
    try {
      const result = await this.client.lookup(context.toolUse.input ?? {}, { signal: context.cancelSignal });
      const receipt = result.content[0].json;
      return new ToolResultBlock({ toolUseId, status: result.status === 'success' ? 'success' : 'error',
        content: [new JsonBlock({ json: receipt }), new TextBlock(result.content[1].text)] });
    } catch (err) {
      // No lookup ran (bad input, quota, broker unreachable): say so in the text the model reads.
      const why = err instanceof VerifetchError && err.field ? `bad_request: ${err.field}: ${err.message}` : String(err.message ?? err);
      return new ToolResultBlock({ toolUseId, status: 'error', content: [new TextBlock(`LOOKUP FAILED: ${why}`)],
        error: err instanceof Error ? err : new Error(String(err)) });
    }
  }
}
