import test from 'ava';
import { BaseTool } from '../../src/tools/base-tool.js';
import type { ToolResult, ValidationResult } from '../../src/tools/tool.js';

/** The least a tool written as a class needs: params, a description of a call, and running it. */
class EchoTool extends BaseTool<{ text: string }> {
  constructor() {
    super({ name: 'echo', description: 'Echoes text.', kind: 'read', parametersJsonSchema: { type: 'object', properties: { text: { type: 'string' } } } });
  }

  validateParams(raw: unknown): ValidationResult<{ text: string }> {
    const text = (raw as { text?: unknown } | undefined)?.text;
    return typeof text === 'string' ? { ok: true, params: { text } } : { ok: false, error: 'params/text: expected a string' };
  }

  describe(params: { text: string }): string {
    return `echo ${params.text}`;
  }

  async execute(params: { text: string }): Promise<ToolResult> {
    return { llmContent: params.text, returnDisplay: params.text };
  }
}

test('a class-based tool states its fields once and gets the declaration and the defaults', async (t) => {
  const tool = new EchoTool();
  t.deepEqual(tool.declaration(), {
    name: 'echo',
    description: 'Echoes text.',
    parametersJsonSchema: { type: 'object', properties: { text: { type: 'string' } } },
  });
  t.is(tool.displayName, 'echo', 'the display name defaults to the name');
  t.false(tool.canUpdateOutput);
  t.false(tool.isOutputMarkdown);
  t.is(tool.modifiable, undefined);
  t.deepEqual(tool.toolLocations({ text: 'x' }), []);
  t.false(await tool.shouldConfirmExecute({ text: 'x' }, new AbortController().signal), 'no confirmation unless the tool asks');
  t.deepEqual(tool.validateParams({ text: 1 }), { ok: false, error: 'params/text: expected a string' });
  t.is((await tool.execute({ text: 'hi' })).llmContent, 'hi');
});
