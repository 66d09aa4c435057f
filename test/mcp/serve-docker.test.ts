import anyTest from 'ava';
import { realpath, stat } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LABELS } from '../../src/backends/docker/labels.js';
import { containersWithLabel, requireDocker } from '../helpers/docker.js';
import { connectServeStdio, serveWorkspace, startServeHttp, toolResultText } from '../helpers/mcp.js';

/**
 * `toolcell serve` with the real Docker sandbox, driven by the SDK client:
 * commands run in a container, MCP cancellation ends the command inside it,
 * over stdio the one session has one container (no spare), and HTTP
 * sessions do not share their sandbox.
 */
const test = await requireDocker(anyTest, 'serve in the docker sandbox');

test('commands run in the container, and MCP cancellation ends the command inside it', async (t) => {
  const dir = await serveWorkspace(t, 'toolcell-serve-docker-');
  const { client } = await connectServeStdio({ workspace: dir, args: ['--approval', 'yolo', '--sandbox', 'docker'] });
  t.teardown(() => client.close());
  const where = toolResultText(await client.callTool({ name: 'run_shell_command', arguments: { command: 'pwd; id -u' } }));
  const uid = /Output: \/workspace\r?\n(\d+)/.exec(where)?.[1];
  t.truthy(uid, where);
  t.is(Number(uid), (await stat(dir)).uid, "as the workspace's owner");

  const controller = new AbortController();
  let started = false;
  const running = client.callTool({ name: 'run_shell_command', arguments: { command: 'echo started; sleep 1000' } }, undefined, {
    signal: controller.signal,
    onprogress: (progress) => {
      if (progress.message?.includes('started')) started = true;
    },
  });
  for (let i = 0; i < 400 && !started; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.true(started);
  controller.abort('test cancels');
  await t.throwsAsync(running);
  let ps = '';
  for (let i = 0; i < 40; i++) {
    ps = toolResultText(await client.callTool({ name: 'run_shell_command', arguments: { command: 'ps -eo args' } }));
    if (!ps.includes('sleep 1000')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.false(ps.includes('sleep 1000'), ps);
  // Over stdio there is one session: its container, and no spare beside it that nobody would take.
  const containers = await containersWithLabel(LABELS.workspace, await realpath(dir));
  t.is(containers.length, 1, `containers of the workspace: ${containers.join(', ')}`);
});

test('HTTP sessions each get their own sandbox', async (t) => {
  const dir = await serveWorkspace(t, 'toolcell-serve-docker-');
  const server = await startServeHttp({ workspace: dir, args: ['--http', '127.0.0.1:0', '--approval', 'yolo', '--sandbox', 'docker'] });
  t.teardown(server.stop);
  const open = async () => {
    const client = new Client({ name: 'docker-session-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    t.teardown(() => client.close());
    return client;
  };
  const a = await open();
  const b = await open();
  await a.callTool({ name: 'run_shell_command', arguments: { command: 'echo secret-of-a > /tmp/a.txt' } });
  t.regex(toolResultText(await a.callTool({ name: 'run_shell_command', arguments: { command: 'cat /tmp/a.txt' } })), /secret-of-a/);
  t.regex(toolResultText(await b.callTool({ name: 'run_shell_command', arguments: { command: 'cat /tmp/a.txt || echo missing' } })), /missing/);
});
