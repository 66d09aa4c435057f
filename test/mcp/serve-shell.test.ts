import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectServeStdio, isAlive, serveWorkspace, startServeHttp, toolResultText } from '../helpers/mcp.js';

/**
 * run_shell_command through `toolcell serve`, driven by the SDK client.
 * Sessions run on the host (`--sandbox none`) so that the process checks
 * below can look at real PIDs on any machine.
 */
async function waitFor(predicate: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a shell command runs and its live output arrives as progress', async (t) => {
  const dir = await serveWorkspace(t, 'toolcell-serve-shell-');
  const { client } = await connectServeStdio({ workspace: dir, args: ['--approval', 'yolo', '--sandbox', 'none'] });
  t.teardown(() => client.close());
  const messages: string[] = [];
  const result = await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo first; sleep 0.5; echo second' } }, undefined, {
    onprogress: (progress) => messages.push(progress.message ?? ''),
  });
  t.falsy(result.isError);
  t.regex(toolResultText(result), /first\r?\nsecond/);
  t.true(
    messages.some((message) => message.includes('first')),
    messages.join(' | '),
  );
});

test("MCP cancellation kills the command's processes", async (t) => {
  const dir = await serveWorkspace(t, 'toolcell-serve-shell-');
  const { client } = await connectServeStdio({ workspace: dir, args: ['--approval', 'yolo', '--sandbox', 'none'] });
  t.teardown(() => client.close());
  const controller = new AbortController();
  const running = client.callTool({ name: 'run_shell_command', arguments: { command: 'sleep 1000 & echo $! > sleeper.pid; echo started; wait' } }, undefined, {
    signal: controller.signal,
    onprogress: () => {},
  });
  let pid = 0;
  await waitFor(async () => {
    pid = Number((await readFile(join(dir, 'sleeper.pid'), 'utf8').catch(() => '')).trim());
    return pid > 0;
  }, 'the command to start');
  t.true(isAlive(pid));
  controller.abort('test cancels');
  await t.throwsAsync(running);
  await waitFor(() => !isAlive(pid), `process ${pid} to end`);
  t.false(isAlive(pid));
});

test('over HTTP each session has its own shell session, and ending it ends its background jobs', async (t) => {
  const dir = await serveWorkspace(t, 'toolcell-serve-shell-');
  const server = await startServeHttp({ workspace: dir, args: ['--http', '127.0.0.1:0', '--approval', 'yolo', '--sandbox', 'none'] });
  t.teardown(server.stop);
  const open = async () => {
    const client = new Client({ name: 'shell-session-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    return { client, transport };
  };
  const a = await open();
  const b = await open();
  t.teardown(() => b.client.close());
  const started = toolResultText(await a.client.callTool({ name: 'run_shell_command', arguments: { command: 'sleep 1000', is_background: true } }));
  const pid = Number(/Background PIDs: (\d+)/.exec(started)?.[1]);
  t.true(pid > 0, started);
  t.true(isAlive(pid));
  t.regex(toolResultText(await b.client.callTool({ name: 'run_shell_command', arguments: { command: 'echo from b' } })), /from b/);

  await a.transport.terminateSession();
  await a.client.close();
  await waitFor(() => !isAlive(pid), `background job ${pid} of the ended session to end`);
  t.false(isAlive(pid));
  // The other session is untouched.
  t.regex(toolResultText(await b.client.callTool({ name: 'run_shell_command', arguments: { command: 'echo still here' } })), /still here/);
});
