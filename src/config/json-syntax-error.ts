import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';

/** Where a JSON text first breaks the grammar, and what was expected there. */
export interface JsonSyntaxError {
  /** 1-based. */
  line: number;
  /** 1-based, in characters of that line. */
  column: number;
  /** What is wrong there, in words that never quote the text. */
  problem: string;
}

const PROBLEMS: Readonly<Record<string, string>> = {
  ValueExpected: 'a value is expected',
  CommaExpected: 'a comma is expected',
  ColonExpected: 'a colon is expected',
  PropertyNameExpected: 'a property name in double quotes is expected',
  CloseBraceExpected: 'a closing } is expected',
  CloseBracketExpected: 'a closing ] is expected',
  EndOfFileExpected: 'nothing may follow the value',
  InvalidSymbol: 'this is not a JSON value (strings need double quotes; true, false and null are lower case)',
  InvalidCommentToken: 'comments are not JSON',
  UnexpectedEndOfComment: 'comments are not JSON',
  UnexpectedEndOfString: 'a string is not closed on its line',
  UnexpectedEndOfNumber: 'a number is cut short',
  InvalidNumberFormat: 'a number is not written as JSON writes them',
  InvalidUnicode: 'a \\u escape needs four hex digits',
  InvalidEscapeCharacter: 'a backslash escape that JSON does not have',
  InvalidCharacter: 'a control character inside a string (write it as an escape)',
};

/**
 * Locates the first syntax error of a text that JSON.parse refused. V8's own
 * message gives a position only for some errors (on Node 20 `Unexpected
 * token` gives none) and quotes the text around it, which must not be
 * printed for a settings file that could be a link to a secret. The JSON
 * grammar (comments and trailing commas refused) is checked by jsonc-parser,
 * Microsoft's parser of VS Code. Undefined when it finds nothing wrong.
 */
export function locateJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first === undefined) return undefined;
  const before = text.slice(0, first.offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  const code = printParseErrorCode(first.error);
  return { line: before.split('\n').length, column: first.offset - lineStart + 1, problem: PROBLEMS[code] ?? 'the JSON grammar is broken here' };
}

/** ` (line L, column C: problem)` for a message, or '' when the place is not known. */
export function describeJsonSyntaxError(text: string): string {
  const where = locateJsonSyntaxError(text);
  return where ? ` (line ${where.line}, column ${where.column}: ${where.problem})` : '';
}
