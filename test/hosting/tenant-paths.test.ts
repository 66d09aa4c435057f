/**
 * A tenant knows its workspace as its sandbox shows it, /workspace (the
 * shell's working directory): the file tools accept `/workspace/…` and
 * answer with relative or /workspace paths, in results and errors alike,
 * and nothing a tenant gets back names the server's data directory. Before,
 * they refused `/workspace/hello.txt` and answered with
 * `<data-dir>/workspaces/acme-…/hello.txt`. Through a real hosting server
 * (as `toolcell serve` runs it as root: the tenant's workspace on its disk)
 * and the MCP SDK client.
 */
import anyTest from 'ava';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { PrepareWorkspace } from '../../src/hosting/tenants/tenant-workspace.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';
import { MiB, TenantDisks, canMount } from '../helpers/tenant-disks.js';

const test = (await requireDocker(anyTest, 'hosting/tenant-paths')).serial;

test('the file tools take /workspace paths and answer in them; no result, error or refusal names the data directory', async (t) => {
  t.timeout(300_000);
  if (!canMount(t)) return;
  const dir = await hostingFolder(t, 'toolcell-hosting-paths-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const key = await addTenant(file, 'acme');
  const brokenKey = await addTenant(file, 'broken');
  const disks = await TenantDisks.open({ dataDir });
  t.teardown(() => disks.releaseAll());
  // A workspace that cannot be made (say its image is damaged): the reason names host paths.
  const prepareWorkspace: PrepareWorkspace = async (tenant, _limits, owner) => {
    if (tenant === 'broken') throw new Error(`cannot mount ${dataDir}/disk-images/broken.ext4 on ${dataDir}/workspaces/broken`);
    return disks.prepare(tenant, { diskBytes: 64 * MiB }, owner);
  };
  const logs: string[] = [];
  const hosting = await startHosting({ tenantsFile: file, dataDir, prepareWorkspace, onLog: (line) => logs.push(line) });
  t.teardown(() => hosting.close());
  const { client } = await connectTenant(t, hosting.server.url, key);
  const hostDirs = [dir, dataDir, await realpath(dataDir), disks.workspacePath('acme')];

  const answers: Array<{ what: string; text: string; errorType?: string }> = [];
  const ask = async (what: string, tool: string, args: Record<string, unknown>): Promise<{ text: string; errorType?: string }> => {
    const answer = await call(client, tool, args);
    answers.push({ what, ...answer });
    return answer;
  };

  // The shell's own view: its working directory is /workspace.
  t.regex((await ask('pwd', 'run_shell_command', { command: 'pwd; mkdir -p sub' })).text, /Output: \/workspace\n/);
  const written = await ask('write', 'write_file', { file_path: '/workspace/hello.txt', content: 'hello\n' });
  t.is(written.errorType, undefined, written.text);
  t.regex(written.text, /\/workspace\/hello\.txt/, 'answered with the path the tenant used');
  t.regex((await ask('read /workspace', 'read_file', { file_path: '/workspace/hello.txt' })).text, /hello/);
  t.regex((await ask('read relative', 'read_file', { file_path: 'hello.txt' })).text, /hello/);
  t.regex((await ask('shell reads it', 'run_shell_command', { command: 'cat /workspace/hello.txt' })).text, /hello/);
  const replaced = await ask('replace', 'replace', { file_path: '/workspace/hello.txt', old_string: 'hello', new_string: 'hi' });
  t.is(replaced.errorType, undefined, replaced.text);
  t.regex(replaced.text, /\/workspace\/hello\.txt/);
  t.regex((await ask('list', 'list_directory', { dir_path: '/workspace' })).text, /hello\.txt/);
  t.regex((await ask('glob', 'glob', { pattern: '**/*.txt' })).text, /^\/workspace\/hello\.txt$/m, 'glob answers with /workspace paths');
  t.regex((await ask('glob /workspace', 'glob', { pattern: '/workspace/*.txt', dir_path: '/workspace' })).text, /^\/workspace\/hello\.txt$/m);
  t.regex((await ask('grep', 'grep_search', { pattern: 'hi', dir_path: '/workspace' })).text, /hello\.txt/);
  t.regex((await ask('read many', 'read_many_files', { include: ['/workspace/*.txt'] })).text, /--- \/workspace\/hello\.txt ---/);
  t.regex((await ask('shell in a folder', 'run_shell_command', { command: 'pwd', dir_path: '/workspace/sub' })).text, /Output: \/workspace\/sub\n/);

  // A long output is saved, and its path is one the tenant can read.
  const long = await ask('long output', 'run_shell_command', { command: 'seq 1 30000' });
  const saved = /saved at (\S+?);/.exec(long.text)?.[1] ?? '';
  t.regex(saved, /^\/workspace\/\.toolcell\/tool-outputs\/.+\.txt$/, long.text.slice(-600));
  t.regex((await ask('read saved', 'read_file', { file_path: saved, start_line: 29999, end_line: 30000 })).text, /29999\n30000/);

  // Failures and refusals.
  const refusals: Array<[string, string, Record<string, unknown>, string]> = [
    ['outside', 'read_file', { file_path: '/etc/passwd' }, 'path_not_in_workspace'],
    ['climbing out', 'read_file', { file_path: '../../etc/passwd' }, 'path_not_in_workspace'],
    ['missing', 'read_file', { file_path: '/workspace/missing.txt' }, 'file_not_found'],
    ['missing folder', 'list_directory', { dir_path: '/workspace/nope' }, 'file_not_found'],
    ['a folder as a file', 'write_file', { file_path: '/workspace/sub', content: 'x' }, 'target_is_directory'],
    ['state folder', 'write_file', { file_path: '/workspace/.toolcell/x', content: 'x' }, 'toolcell_state_read_only'],
    ['glob outside', 'glob', { pattern: '/etc/*' }, 'path_not_in_workspace'],
    ['bad dir for the shell', 'run_shell_command', { command: 'true', dir_path: '/workspace/nope' }, ''],
  ];
  for (const [what, tool, args, type] of refusals) {
    const answer = await ask(what, tool, args);
    if (type !== '') t.is(answer.errorType, type, `${what}: ${answer.text}`);
    else t.truthy(answer.errorType, `${what} fails: ${answer.text}`);
  }
  // What the sandbox shows of its mounts: a tenant on its disk sees the disk's root, never its image or mount point.
  await ask('mounts', 'run_shell_command', { command: 'cat /proc/self/mountinfo; cat /sys/block/*/loop/backing_file 2>&1' });

  // A session that cannot be opened says so, and why only to the operator.
  const refused = await connectTenant(t, hosting.server.url, brokenKey).then(
    () => 'opened',
    (error: Error) => error.message,
  );
  answers.push({ what: 'session refused', text: refused });
  t.regex(refused, /Could not open a session; the server's log says why/);
  t.true(
    logs.some((line) => line.includes(`${dataDir}/disk-images/broken.ext4`)),
    logs.join('\n'),
  );

  const leaks = answers
    .filter((answer) => hostDirs.some((hostDir) => answer.text.includes(hostDir)))
    .map((answer) => `${answer.what}: ${answer.text.slice(0, 300)}`);
  t.deepEqual(leaks, [], 'no answer names a host path of the server');
});
