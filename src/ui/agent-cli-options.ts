import { InvalidArgumentError, Option } from 'commander';
import { DEFAULT_MAX_TURNS, DEFAULT_MODEL } from '../agent/defaults.js';

/** `-m, --model`: defaults to GEMINI_MODEL, then gemini-2.5-flash. */
export function modelOption(): Option {
  const fallback = process.env.GEMINI_MODEL?.trim() || DEFAULT_MODEL;
  return new Option('-m, --model <name>', 'Gemini model').default(fallback, `${fallback}; GEMINI_MODEL sets another default`).argParser((value: string) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/.test(value)) throw new InvalidArgumentError('must be a model name such as gemini-2.5-flash');
    return value;
  });
}

/** `--max-turns`: model requests allowed for one prompt. */
export function maxTurnsOption(): Option {
  return new Option('--max-turns <n>', 'model requests allowed for one prompt before stopping').default(DEFAULT_MAX_TURNS).argParser((value: string) => {
    const turns = Number(value);
    if (!Number.isInteger(turns) || turns < 1) throw new InvalidArgumentError('must be an integer >= 1');
    return turns;
  });
}

export function telemetryFileOption(): Option {
  return new Option('--telemetry-file <file>', 'append one JSON line per finished tool call to this file');
}

/** What the options above parse into. */
export interface AgentCliOptions {
  model: string;
  maxTurns: number;
  telemetryFile?: string;
}
