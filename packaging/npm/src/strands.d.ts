import { Tool, ToolResultBlock, type ToolContext, type ToolSpec, type ToolStreamEvent } from '@strands-agents/sdk';
import { VerifetchClient } from './client.js';
export declare class VerifiedWebLookupTool extends Tool {
  constructor(options?: { client?: VerifetchClient; toolSpec?: ToolSpec });
  name: string;
  description: string;
  toolSpec: ToolSpec;
  client: VerifetchClient;
  static fromBroker(client?: VerifetchClient): Promise<VerifiedWebLookupTool>;
  stream(context: ToolContext): AsyncGenerator<ToolStreamEvent, ToolResultBlock, undefined>;
}
