import type { ToolRegistry } from '../registry/tool-registry.js';
import type { ToolCallRequest } from '../scheduler/tool-call.js';

/**
 * One line describing a requested call, from its tool's `describe` when the
 * tool exists and the arguments are valid; otherwise its arguments as JSON.
 */
export function describeRequest(registry: Pick<ToolRegistry, 'get'>, request: ToolCallRequest): string {
  const tool = registry.get(request.name);
  if (tool) {
    try {
      const validation = tool.validateParams(request.args);
      if (validation.ok) return tool.describe(validation.params);
    } catch {
      // A tool's describe must not break the display; fall back to the raw call.
    }
  }
  const args = JSON.stringify(request.args);
  return args === '{}' ? '' : args;
}
