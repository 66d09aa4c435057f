import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { fixtureStdioSettings, runToolcell, tempWorkspace, writeWorkspaceSettings } from '../helpers/mcp.js';

test('mcp list shows each server, its state and its tools', async (t) => {
  const workspace = await tempWorkspace();
  t.teardown(workspace.cleanup);
  await writeWorkspaceSettings(workspace.dir, {
    mcpServers: { fx: fixtureStdioSettings({ includeTools: ['echo', 'add'] }), gone: { command: '/nonexistent/mcp-server' } },
  });
  const result = await runToolcell(['mcp', 'list', '--workspace', workspace.dir], { env: { HOME: workspace.dir } });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^fx \(stdio: .*fixture-server\.js\) connected, 2 tools$/m);
  t.regex(result.stdout, /^ {2}mcp_fx_echo +Echoes the text back\.$/m);
  t.regex(result.stdout, /^gone \(stdio: \/nonexistent\/mcp-server\) failed$/m);
  t.regex(result.stdout, /^ {2}error: could not connect: .*ENOENT/m);

  const json = await runToolcell(['mcp', 'list', '--workspace', workspace.dir, '--json'], { env: { HOME: workspace.dir } });
  const servers = JSON.parse(json.stdout) as Array<{ name: string; state: string; tools: Array<{ name: string }> }>;
  t.deepEqual(
    servers.map((server) => [server.name, server.state, server.tools.length]),
    [
      ['fx', 'connected', 2],
      ['gone', 'failed', 0],
    ],
  );
});

test('mcp list with --settings reads only that file; invalid settings exit 2 naming the field', async (t) => {
  const workspace = await tempWorkspace();
  t.teardown(workspace.cleanup);
  const file = join(workspace.dir, 'other.json');
  await writeFile(file, JSON.stringify({ mcpServers: { fx: { command: 'x', timeout: 'soon' } } }));
  const result = await runToolcell(['mcp', 'list', '--workspace', workspace.dir, '--settings', file]);
  t.is(result.code, 2);
  t.regex(result.stderr, /Invalid settings in .*other\.json: mcpServers\.fx\.timeout/);
  t.is(result.stdout, '');

  // HOME points at the empty workspace: the user's own settings must not leak into the test.
  const none = await runToolcell(['mcp', 'list', '--workspace', workspace.dir], { env: { HOME: workspace.dir } });
  t.is(none.code, 0);
  t.regex(none.stdout, /No MCP servers configured/);
});
