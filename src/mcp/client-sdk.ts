import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { createClientTransport } from './create-transport.js';

/** What a connection uses of the MCP SDK's client side. */
export interface ClientSdk {
  Client: typeof Client;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
  createClientTransport: typeof createClientTransport;
}

let loading: Promise<ClientSdk> | undefined;

/**
 * The MCP SDK's client side, loaded on the first connection: a run with no
 * MCP server configured never loads it (with the zod schemas of every MCP
 * message, it was the largest part of the CLI's start-up).
 */
export function loadClientSdk(): Promise<ClientSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('./create-transport.js'),
  ]).then(([client, types, transport]) => ({
    Client: client.Client,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    createClientTransport: transport.createClientTransport,
  }));
  return loading;
}
