import { z } from 'zod';

/**
 * Checks the options object a public entry point was given against its zod
 * schema and returns it with defaults applied: the one way toolcell
 * validates options. Schemas hold the defaults (`.default(...)`), and the
 * option types are derived from them (`z.input` for what callers pass,
 * `z.output` for what the code uses).
 *
 * A failure is thrown as JavaScript's own error classes, naming the field
 * (`ShellService.create: options.terminal.cols must be ...`): RangeError for
 * a value out of bounds, TypeError for anything else.
 */
export function parseOptions<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string): z.output<Schema> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = ['options', ...issue.path.map(String)].join('.');
  const message = `${where}: ${field} ${describe(issue)}`;
  throw issue.code === 'too_small' || issue.code === 'too_big' || issue.code === 'not_multiple_of' ? new RangeError(message) : new TypeError(message);
}

function describe(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_small':
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${String(issue.minimum)}`;
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}`;
    case 'invalid_type':
      return `must be ${issue.expected === 'int' ? 'an integer' : `a ${issue.expected}`}`;
    default:
      return `is invalid: ${issue.message}`;
  }
}

/** An integer option from `min` (to `max`), with its default. */
export function integerOption(min: number, fallback: number, max = Number.MAX_SAFE_INTEGER) {
  return z.number().int().min(min).max(max).default(fallback);
}
