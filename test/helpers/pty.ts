import { createRequire } from 'node:module';
import xterm from '@xterm/headless';
import type * as NodePty from 'node-pty';

// node-pty is CommonJS with a native addon; load it the CommonJS way.
const pty = createRequire(import.meta.url)('node-pty') as typeof NodePty;

export interface PtyOptions {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  cols?: number;
  rows?: number;
}

/** Keys as a terminal sends them. */
export const KEYS = {
  enter: '\r',
  escape: '\x1b',
  ctrlC: '\x03',
  ctrlD: '\x04',
  up: '\x1b[A',
  down: '\x1b[B',
  shiftTab: '\x1b[Z',
  backspace: '\x7f',
} as const;

/**
 * A program running in a real pseudo-terminal, its output fed to a headless
 * xterm so tests read the screen as a person would see it (redraws applied,
 * escape codes interpreted), not the raw byte stream.
 */
export interface PtySession {
  /** Types into the terminal. */
  write(data: string): void;
  /** The visible screen, one string per row, right-trimmed. */
  screen(): string[];
  /** Everything printed so far that scrolled into the scrollback, plus the screen. */
  transcript(): string;
  /** Raw output bytes (with escape codes), for colour checks. */
  raw(): string;
  /** Resolves with the screen once `pattern` matches it (joined by newlines); rejects after `timeoutMs` with the screen. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Like waitForScreen, over the whole transcript. */
  waitForTranscript(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code once the program ends. */
  exited(timeoutMs?: number): Promise<number>;
  kill(): void;
}

export function spawnPty(options: PtyOptions): PtySession {
  const cols = options.cols ?? 100;
  const rows = options.rows ?? 30;
  const term = new xterm.Terminal({ cols, rows, scrollback: 5000, allowProposedApi: true });
  const child = pty.spawn(options.command, options.args, {
    name: 'xterm-256color',
    cols,
    rows,
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? process.env,
  });
  let raw = '';
  let exitCode: number | undefined;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  child.onData((data) => {
    raw += data;
    term.write(data, notify);
  });
  child.onExit(({ exitCode: code }) => {
    exitCode = code;
    // Let the last output be parsed before anyone looks at the screen.
    term.write('', notify);
  });

  const lines = (from: number, to: number): string[] => {
    const buffer = term.buffer.active;
    const out: string[] = [];
    for (let y = from; y < to; y++) out.push(buffer.getLine(y)?.translateToString(true) ?? '');
    return out;
  };
  const screen = () => lines(term.buffer.active.viewportY, term.buffer.active.viewportY + rows);
  const transcript = () => lines(0, term.buffer.active.length).join('\n');

  const waitFor = (read: () => string, pattern: RegExp, timeoutMs: number, what: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const text = read();
        if (pattern.test(text)) {
          cleanup();
          resolve(text);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${pattern} on the ${what}; it shows:\n${read()}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  return {
    write: (data) => child.write(data),
    screen,
    transcript,
    raw: () => raw,
    waitForScreen: (pattern, timeoutMs = 30_000) => waitFor(() => screen().join('\n'), pattern, timeoutMs, 'screen'),
    waitForTranscript: (pattern, timeoutMs = 30_000) => waitFor(transcript, pattern, timeoutMs, 'transcript'),
    exited: (timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (exitCode !== undefined) {
            clearTimeout(timer);
            listeners.delete(check);
            resolve(exitCode);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the program did not exit; the screen shows:\n${screen().join('\n')}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
    kill: () => {
      try {
        child.kill();
      } catch {
        // Already gone.
      }
    },
  };
}
