import { parse, TomlError } from 'smol-toml';
import { z } from 'zod';
import { readSettingsText, type SettingsFileOrigin } from '../config/settings-file.js';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { normaliseRule, policyRuleSchema, type PolicyRule, type PolicyRuleInput } from './policy-rule.js';

const POLICY_FILE = { code: ToolErrorType.INVALID_POLICY, noun: 'policy file' } as const;

const policyFileSchema = z.strictObject({ rule: z.array(z.unknown(), { error: 'must be an array of [[rule]] tables' }).optional() });

function invalid(file: string, detail: string): ToolcellError {
  return new ToolcellError(ToolErrorType.INVALID_POLICY, `Invalid policy file ${file}: ${detail}`);
}

/**
 * Reads one policy file (TOML, `[[rule]]` tables) the way settings files
 * are read (no FIFO hangs, size-capped, a workspace's file never through a
 * symbolic link). Resolves `[]` for a missing optional file. Anything wrong
 * throws `invalid_policy` naming the file, the rule's index and the field,
 * never falling back to fewer rules: a dropped deny rule fails open.
 */
export function loadPolicyFile(file: string, options: { required: boolean; origin: SettingsFileOrigin }): PolicyRule[] {
  const text = readSettingsText(file, options.origin, POLICY_FILE);
  if (text === undefined) {
    if (options.required) throw invalid(file, 'the file does not exist');
    return [];
  }
  return parsePolicyText(text, file);
}

/** Parses a policy file's text; `file` names it in errors. */
export function parsePolicyText(text: string, file: string): PolicyRule[] {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    // smol-toml's message quotes the text around the error; say only where it is (see parseSettingsJson).
    if (error instanceof TomlError) throw invalid(file, `not valid TOML (line ${error.line}, column ${error.column})`);
    throw invalid(file, 'not valid TOML');
  }
  const top = policyFileSchema.safeParse(document);
  if (!top.success) throw invalid(file, describeIssue(top.error.issues[0]!, []));
  return checkRules(top.data.rule ?? [], file);
}

/** Checks rules given in code (`createRuntime({ policy })`); `where` names them in errors. */
export function checkRules(rules: readonly (PolicyRuleInput | unknown)[], where: string): PolicyRule[] {
  return rules.map((raw, i) => {
    const result = policyRuleSchema.safeParse(raw);
    if (!result.success) {
      // A misspelt field explains the rest (`decison` → `decision` is missing): name it first.
      const issue = result.error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? result.error.issues[0]!;
      throw invalid(where, describeIssue(issue, [`rule ${i + 1}`]));
    }
    return normaliseRule(result.data, { file: where, index: i + 1 });
  });
}

/** `rule 2: decision must be allow, deny or ask_user`; `rule 1: comandPrefix is not a known field`. */
function describeIssue(issue: z.core.$ZodIssue, prefix: string[]): string {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0] ?? ''].join('.');
    return [...prefix, `${field} is not a known field`].join(': ');
  }
  if (issue.code === 'invalid_union') {
    const deepest = issue.errors.flat().find((inner) => inner.message.startsWith('must '));
    if (deepest) return describeIssue({ ...deepest, path: [...issue.path, ...deepest.path] } as z.core.$ZodIssue, prefix);
  }
  const field = path.join('.');
  const message = issue.message.startsWith('must ')
    ? issue.message
    : issue.code === 'invalid_type'
      ? `must be ${issue.expected === 'array' ? 'a list' : `a ${issue.expected}`}`
      : `is invalid: ${issue.message}`;
  return [...prefix, field === '' ? message : `${field} ${message}`].join(': ');
}
