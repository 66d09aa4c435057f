import test from 'ava';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolCallEvent, toolErrorResult } from '../../src/hosting/operations/call-record.js';
import type { ToolCallRun } from '../../src/mcp/server/create-tool-server.js';

/** The audit line's `decision` is the README's `allow` or `deny`, never the scheduler's telemetry values (`auto`, `denied`). */

const base = { tenant: 'acme', session: 's', callId: 'c', tool: 'run_shell_command', args: {}, durationMs: 3 };
const ok: CallToolResult = { content: [{ type: 'text', text: 'Exit Code: 0' }] };

function ran(decision: ToolCallRun['completed']['decision'], status: 'success' | 'error' | 'cancelled', result: CallToolResult): ToolCallRun {
  return { result, completed: { status, decision } as ToolCallRun['completed'] };
}

test('a call let run is "allow", whoever let it (policy rule, approval mode, a person)', (t) => {
  for (const decision of ['auto', 'accept', 'accept_always', 'modify'] as const) {
    t.like(toolCallEvent({ ...base, result: ok, run: ran(decision, 'success', ok) }), { decision: 'allow', outcome: 'success' }, decision);
  }
  const failed = toolErrorResult('execution_timeout', 'too long');
  t.like(toolCallEvent({ ...base, result: failed, run: ran('auto', 'error', failed) }), {
    decision: 'allow',
    outcome: 'error',
    errorType: 'execution_timeout',
  });
});

test('a call refused before it ran is "deny": policy, confirmation, limits', (t) => {
  const denied = toolErrorResult('policy_denied', 'no');
  t.like(toolCallEvent({ ...base, result: denied, run: ran('denied', 'error', denied) }), { decision: 'deny', outcome: 'denied' });
  const asked = toolErrorResult('confirmation_required', 'nobody to ask');
  t.like(toolCallEvent({ ...base, result: asked, run: ran('denied', 'error', asked) }), { decision: 'deny', outcome: 'denied' });
  const quota = toolErrorResult('quota_exceeded', 'limit');
  t.like(toolCallEvent({ ...base, result: quota }), { decision: 'deny', outcome: 'denied', errorType: 'quota_exceeded' });
});
