/**
 * The policy splitter against real bash: each command line is split by the
 * engine and run by bash in the sandbox container with xtrace on its own fd
 * (BASH_XTRACEFD, and SHELLOPTS exported so that every child bash traces
 * too), which records every simple command bash runs, builtins and
 * functions included. A command bash ran that the splitter neither reported
 * nor marked "cannot be judged" is a disagreement.
 */
import { chown, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ShellSession } from '../../src/backends/backend.js';
import { splitWrapper } from '../../src/policy/command-wrappers.js';
import type { ShellWord } from '../../src/policy/shell-words.js';
import { splitCommand, type SimpleCommand } from '../../src/policy/split-command.js';
import { SANDBOX_TEST_ENV } from './docker.js';

/** What one command line came to. */
export type Outcome =
  { kind: 'agreed' } | { kind: 'unjudgeable'; reason: string } | { kind: 'disagreed'; command: string; missed: string[][]; reported: string[][] };

export interface DifferentialResult {
  generated: number;
  agreed: number;
  unjudgeable: number;
  disagreements: Array<Extract<Outcome, { kind: 'disagreed' }>>;
}

/** The first character of PS4 marks each trace record (bash repeats it per nesting level); as a control character bash never prints it unquoted inside a word. */
const RECORD = '\x1e';

/** The owner a differential workspace is given (see traceInSandbox): any uid but root's. */
export const TRACE_OWNER = { uid: 4242, gid: 4242 };

/**
 * Runs every command in one sandbox session, in a scratch folder, with its
 * input at /dev/null and 3 s at most, its process group killed afterwards.
 * Returns each command's trace (one argv per simple command).
 *
 * Commands run as the workspace's owner, and bash run as root does not take
 * PS4 from its environment (so the record mark would be lost and every trace
 * misread): the workspace must belong to an ordinary user (TRACE_OWNER,
 * given before the session is opened).
 */
export async function traceInSandbox(session: ShellSession, workspaceRoot: string, commands: readonly string[]): Promise<string[][][]> {
  const owner = await stat(workspaceRoot);
  if (owner.uid === 0)
    throw new Error(`${workspaceRoot} belongs to root: bash run as root ignores PS4 from its environment; chown it to TRACE_OWNER before opening the session`);
  const dir = join(workspaceRoot, 'diff');
  await mkdir(join(dir, 'traces'), { recursive: true });
  await writeFile(join(dir, 'corpus'), commands.map((command) => `${command}\0`).join(''));
  await writeFile(join(dir, 'driver.sh'), DRIVER);
  for (const path of [dir, join(dir, 'traces'), join(dir, 'corpus'), join(dir, 'driver.sh')]) await chown(path, owner.uid, owner.gid);
  const spawned = await session.spawn({ command: 'bash /workspace/diff/driver.sh', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pipes' });
  const output: Buffer[] = [];
  spawned.onData((chunk) => output.push(Buffer.from(chunk)));
  const status = await spawned.exited;
  if (status.exitCode !== 0) throw new Error(`the trace driver failed (${JSON.stringify(status)}): ${Buffer.concat(output).toString('utf8').slice(-2000)}`);
  const files = new Set(await readdir(join(dir, 'traces')));
  return Promise.all(commands.map(async (_command, i) => (files.has(String(i)) ? parseTrace(await readFile(join(dir, 'traces', String(i)), 'latin1')) : [])));
}

/**
 * The driver, run by bash in the container: no tracing of its own, only of
 * the commands it starts. Three lanes take every third command each, in a
 * scratch folder of their own (so a lane's commands see only what that lane
 * made, run after run), and a command gets 3 s: one that never ends (a
 * recursive function, a reader on a pipe nothing writes) then costs its
 * lane, not the run, and a cut trace only shows less of what bash ran.
 */
const DRIVER = String.raw`
set -u
out=/workspace/diff/traces
# Exported as it is here (no xtrace): the traced bash adds xtrace to it, so every bash it starts traces too.
export PS4=$'\x1e ' SHELLOPTS
lanes=3
lane() {
  local lane=$1 i=0 group
  mkdir -p "/tmp/w$lane" && cd "/tmp/w$lane" || exit 1
  while IFS= read -r -d '' cmd; do
    if [ $((i % lanes)) = "$lane" ]; then
      BASH_XTRACEFD=9 timeout -s KILL 3 bash -x -c "$cmd" </dev/null >/dev/null 2>&1 9>"$out/$i" &
      group=$!
      wait "$group"
      # timeout leads its own process group: what the command left in the background ends with it.
      kill -KILL -- "-$group" 2>/dev/null
    fi
    i=$((i + 1))
  done < /workspace/diff/corpus
}
for n in $(seq 0 $((lanes - 1))); do lane "$n" & done
wait
exit 0
`;

/** Every simple command of an xtrace file, as argv (assignments alone, keywords and `[[ ]]`/`(( ))` left out). */
export function parseTrace(text: string): string[][] {
  const commands: string[][] = [];
  for (const record of text.split(`\n${RECORD}`)) {
    const body = record
      .replace(new RegExp(`^${RECORD}?${RECORD}*`, 'u'), '')
      .replace(/^ /u, '')
      .replace(/\n$/u, '');
    if (body === '') continue;
    // `a=('1' '2')` (an array assignment) and keyword lines are not commands.
    if (/^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=\(/u.test(body)) continue;
    const words = traceWords(body);
    if (words.length === 0 || KEYWORD_LINES.has(words[0]!)) continue;
    if (words.every((word) => /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^]*\])?\+?=/u.test(word))) continue;
    commands.push(words);
  }
  return commands;
}

const KEYWORD_LINES = new Set(['for', 'case', 'select', '[[', '((']);

/** Splits one xtrace record into words: bash quotes them with '…', \x and $'…'. */
function traceWords(body: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < body.length) {
    while (body[i] === ' ') i++;
    if (i >= body.length) break;
    let word = '';
    while (i < body.length && body[i] !== ' ') {
      const c = body[i]!;
      if (c === "'") {
        const end = body.indexOf("'", i + 1);
        word += body.slice(i + 1, end < 0 ? body.length : end);
        i = end < 0 ? body.length : end + 1;
      } else if (c === '$' && body[i + 1] === "'") {
        let end = i + 2;
        while (end < body.length && body[end] !== "'") end += body[end] === '\\' ? 2 : 1;
        word += decodeTraceAnsiC(body.slice(i + 2, end));
        i = end + 1;
      } else if (c === '\\') {
        word += body[i + 1] ?? '';
        i += 2;
      } else {
        word += c;
        i++;
      }
    }
    words.push(word);
  }
  return words;
}

function decodeTraceAnsiC(text: string): string {
  return text.replace(/\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))/gsu, (_match, oct: string, hex: string, other: string) => {
    if (oct) return String.fromCharCode(parseInt(oct, 8));
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    return { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' }[other] ?? other;
  });
}

/** Whether the engine's simple command `reported` stands for the argv bash ran (a word it cannot know matches whatever follows). */
function covers(reported: SimpleCommand, ran: readonly string[]): boolean {
  for (let i = 0; i < reported.words.length; i++) {
    const word = reported.words[i]!;
    if (!word.literal) return true;
    if (ran[i] !== word.text) return false;
  }
  return reported.words.length === ran.length;
}

/**
 * Whether bash's run of `ran` is accounted for: the engine reported it, or
 * it is a wrapper the engine unwraps (`env`, `bash -c`, `eval`…) whose
 * inner commands it reported (code run by a child bash or `eval` is traced
 * line by line itself).
 */
function accounted(reported: readonly SimpleCommand[], ran: readonly string[], depth = 0): boolean {
  if (reported.some((command) => covers(command, ran))) return true;
  if (ran[0] === 'eval' || ran[0] === 'trap') return true;
  const split = depth < 8 ? splitWrapper(ran.map((text): ShellWord => ({ text, literal: true }))) : undefined;
  if (!split || split.checked || split.uncertain) return false;
  return split.inner.every((inner) =>
    accounted(
      reported,
      inner.map((word) => word.text),
      depth + 1,
    ),
  );
}

/** The engine's split of `command` against what bash ran. */
export function compare(command: string, ran: readonly string[][]): Outcome {
  const reported = splitCommand(command);
  const uncertain = reported.find((simple) => simple.uncertain !== undefined);
  if (uncertain) return { kind: 'unjudgeable', reason: uncertain.uncertain! };
  const missed = ran.filter((argv) => !accounted(reported, argv));
  if (missed.length === 0) return { kind: 'agreed' };
  return { kind: 'disagreed', command, missed, reported: reported.map((simple) => simple.words.map((word) => (word.literal ? word.text : `<${word.text}>`))) };
}

/** Splits and runs `commands`, and counts the outcomes. */
export async function runDifferential(session: ShellSession, workspaceRoot: string, commands: readonly string[]): Promise<DifferentialResult> {
  const traces = await traceInSandbox(session, workspaceRoot, commands);
  const result: DifferentialResult = { generated: commands.length, agreed: 0, unjudgeable: 0, disagreements: [] };
  commands.forEach((command, i) => {
    const outcome = compare(command, traces[i]!);
    if (outcome.kind === 'agreed') result.agreed++;
    else if (outcome.kind === 'unjudgeable') result.unjudgeable++;
    else result.disagreements.push(outcome);
  });
  return result;
}
