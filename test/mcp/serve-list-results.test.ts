import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectServeStdio, fixtureStdioSettings, tempWorkspace, writeWorkspaceSettings } from '../helpers/mcp.js';

/**
 * A tool whose output is a list of parts reaches the model as a
 * functionResponse (`Tool execution succeeded.`) followed by the parts,
 * because Gemini wants a functionResponse first. An MCP client must get the
 * parts alone: the SDK's Client drives `toolcell serve --stdio`.
 */

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

type Block = { type: string; text?: string; mimeType?: string; data?: string };

async function serve(t: { teardown: (fn: () => Promise<void>) => void }) {
  const workspace = await tempWorkspace('toolcell-serve-list-');
  await writeFile(join(workspace.dir, 'a.txt'), 'alpha\n');
  await writeFile(join(workspace.dir, 'b.txt'), 'beta\n');
  await writeFile(join(workspace.dir, 'dot.png'), PNG);
  await writeWorkspaceSettings(workspace.dir, { mcpServers: { fx: fixtureStdioSettings({ includeTools: ['image'] }) } });
  const connection = await connectServeStdio({ workspace: workspace.dir, args: ['--trust-workspace', '--approval', 'yolo'] });
  t.teardown(async () => {
    await connection.client.close();
    await workspace.cleanup();
  });
  return connection.client;
}

test('a list-shaped output (read_many_files) is its parts alone, without a "Tool execution succeeded." block', async (t) => {
  const client = await serve(t);
  const result = await client.callTool({ name: 'read_many_files', arguments: { include: ['*.txt'] } });
  t.falsy(result.isError);
  const blocks = result.content as Block[];
  t.false(
    blocks.some((block) => block.text === 'Tool execution succeeded.'),
    JSON.stringify(blocks),
  );
  t.true(blocks.every((block) => block.type === 'text'));
  const text = blocks.map((block) => block.text).join('\n');
  t.regex(text, /alpha/);
  t.regex(text, /beta/);
});

test("an MCP tool's text and image come back as that text and that image, nothing added", async (t) => {
  const client = await serve(t);
  const result = await client.callTool({ name: 'mcp_fx_image', arguments: {} });
  const blocks = result.content as Block[];
  t.deepEqual(
    blocks.map((block) => (block.type === 'text' ? `text:${block.text}` : `${block.type}:${block.mimeType}`)),
    ['text:an image:', 'image:image/png'],
  );
});

test('an image read with read_file is one image block, not a note about binary content before it', async (t) => {
  const client = await serve(t);
  const result = await client.callTool({ name: 'read_file', arguments: { file_path: 'dot.png' } });
  const blocks = result.content as Block[];
  t.is(blocks.length, 1, JSON.stringify(blocks));
  t.like(blocks[0], { type: 'image', mimeType: 'image/png', data: PNG.toString('base64') });
});
