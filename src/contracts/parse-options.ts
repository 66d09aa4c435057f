import { z } from 'zod';

/**
 * Checks the options object a public entry point was given against its zod
 * schema and returns it with defaults applied: the one way toolcell
 * validates options. Schemas hold the defaults (`.default(...)`), and the
 * option types are derived from them (`z.input` for what callers pass,
 * `z.output` for what the code uses).
 *
 * A failure is thrown as JavaScript's own error classes, naming the field
 * (`ShellService.create: options.terminal.cols must be at least 20`):
 * RangeError for a number out of bounds, TypeError for anything else.
 * A schema's own message (`{ error: 'must be …' }`) is used as written.
 */
export function parseOptions<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string): z.output<Schema> {
  const result = schema.safeParse(value === undefined ? {} : value);
  if (result.success) return result.data;
  const issue = mostSpecific(result.error.issues[0]!);
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
  const field = ['options', ...path.map(String)].join('.');
  const message = `${where}: ${field} ${describe(issue)}`;
  throw isOutOfBounds(issue) ? new RangeError(message) : new TypeError(message);
}

/**
 * A union's failure reports each branch's issues; the branch that got
 * furthest into the value (the longest path) says what is wrong with it:
 * for `'auto' | {uid, gid}` given `{uid: 0}`, "uid must be at least 1"
 * rather than "not 'auto'". When no branch got past the top, the union's
 * own message stands.
 */
function mostSpecific(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const deepest = issue.errors
    .map((branch) => branch[0])
    .filter((first): first is z.core.$ZodIssue => first !== undefined && first.path.length > 0)
    .sort((a, b) => b.path.length - a.path.length)[0];
  return deepest === undefined ? issue : mostSpecific({ ...deepest, path: [...issue.path, ...deepest.path] } as z.core.$ZodIssue);
}

function isOutOfBounds(issue: z.core.$ZodIssue): boolean {
  if (issue.code === 'not_multiple_of') return true;
  return (issue.code === 'too_small' || issue.code === 'too_big') && (issue.origin === 'number' || issue.origin === 'bigint');
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.message.startsWith('must ')) return issue.message;
  switch (issue.code) {
    case 'unrecognized_keys':
      return 'is not a known option';
    case 'invalid_key':
      // A record's key: its own schema's message says what a key must be.
      return issue.issues[0] ? describe(issue.issues[0]) : 'is not a valid key';
    case 'too_small':
      if (issue.origin !== 'number' && issue.origin !== 'bigint' && issue.minimum === 1) return 'must not be empty';
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${String(issue.minimum)}${unit(issue.origin)}`;
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}${unit(issue.origin)}`;
    case 'invalid_type':
      return `must be ${issue.expected === 'int' ? 'an integer' : withArticle(issue.expected)}`;
    default:
      return `is invalid: ${issue.message}`;
  }
}

function unit(origin: string): string {
  if (origin === 'string') return ' characters';
  if (origin === 'array' || origin === 'set') return ' items';
  return '';
}

function withArticle(noun: string): string {
  return /^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/** An integer option from `min` (to `max`), with its default. */
export function integerOption(min: number, fallback: number, max = Number.MAX_SAFE_INTEGER) {
  return z.number().int().min(min).max(max).default(fallback);
}

/**
 * An object option known by what it can do (a client, a registry, a
 * session): it must have these methods. The type says what callers pass.
 */
export function objectWithMethods<T>(...methods: string[]) {
  return z.custom<T>(
    (value) => typeof value === 'object' && value !== null && methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function'),
    {
      error: `must have ${methods.map((name) => `${name}()`).join(' and ')}`,
    },
  );
}

/** A callback option: any function; the type says what callers pass. */
export function functionOption<T>() {
  return z.custom<T>((value) => typeof value === 'function', { error: 'must be a function' });
}
