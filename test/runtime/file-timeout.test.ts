/**
 * `tools.fileTimeoutMs` bounds one built-in tool call by the wall clock:
 * a call stuck in its worker (here a busy loop, which no cancellation can
 * reach) ends with `execution_timeout` and the worker is replaced.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../../src/runtime/runtime.js';
import { testToolModuleUrl } from '../helpers/pool.js';

test('tools.fileTimeoutMs ends a stuck file tool call with execution_timeout', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'toolcell-file-timeout-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const settingsFile = join(root, 'settings.json');
  writeFileSync(settingsFile, JSON.stringify({ tools: { fileTimeoutMs: 400 } }));
  await using runtime = await createRuntime({ workspace: root, settingsFile, sandbox: 'none', pool: { threads: 1, toolModules: [testToolModuleUrl] } });
  const [spin] = await runtime.createScheduler({ approvalMode: 'yolo' }).schedule([{ callId: 'spin-1', name: 'spin', args: {} }], new AbortController().signal);
  t.is(spin?.status, 'error');
  t.is(spin?.status === 'error' ? spin.response.error?.type : undefined, 'execution_timeout');
  // The pool still answers: the stuck worker was replaced.
  const [noop] = await runtime.createScheduler({ approvalMode: 'yolo' }).schedule([{ callId: 'noop-1', name: 'noop', args: {} }], new AbortController().signal);
  t.is(noop?.status, 'success');
});
