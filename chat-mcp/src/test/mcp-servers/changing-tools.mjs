// A small MCP server (stdio, on the official TypeScript SDK) whose tool list changes while a client is
// connected: `swap` removes `old_tool` and adds `new_tool`, and the SDK tells the client (tools/list_changed).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'changing-tools', version: '1.0.0' });
const readOnly = { readOnlyHint: true };
const oldTool = server.registerTool('old_tool', { description: 'Goes away on swap', annotations: readOnly },
  async () => ({ content: [{ type: 'text', text: 'old tool ran' }] }));
server.registerTool('swap', { description: 'Replaces old_tool by new_tool', annotations: readOnly }, async () => {
  oldTool.remove();
  server.registerTool('new_tool', { description: 'Came with swap', annotations: readOnly },
    async () => ({ content: [{ type: 'text', text: 'new tool ran' }] }));
  return { content: [{ type: 'text', text: 'swapped' }] };
});
await server.connect(new StdioServerTransport());
