import type { FunctionDeclaration, GenerateContentConfig, Part } from '@google/genai';
import { z } from 'zod';
import { objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import type { CompletedToolCall, ToolCallRequest } from '../scheduler/tool-call.js';
import { AgentErrorCode, classifyApiError } from './api-errors.js';
import { toToolCallRequest } from './call-ids.js';
import { Conversation } from './conversation.js';
import type { AgentError, AgentEvent, AgentOutcome, AgentStatus, TokenUsage } from './events.js';
import { addUsage, emptyUsage } from './events.js';
import type { ContentGenerator } from './gemini-client.js';
import type { ModelTurnResult, StreamProgress } from './model-turn.js';
import { readModelTurn } from './model-turn.js';
import { DEFAULT_MAX_TURNS } from './defaults.js';

export { DEFAULT_MAX_TURNS };

/** What the turn loop needs of the Scheduler (src/scheduler/scheduler.ts satisfies it). */
export interface AgentScheduler {
  /** Runs a batch; resolves with every call completed, in request order. Never rejects for a tool failure. */
  schedule(requests: ToolCallRequest[], signal: AbortSignal): Promise<CompletedToolCall[]>;
}

/** Where the tools offered to the model come from (a ToolRegistry). Read anew every turn. */
export interface DeclarationSource {
  functionDeclarations(): FunctionDeclaration[];
}

const agentOptionsSchema = z.object({
  /** `createGeminiClient().models`, or anything with the same `generateContentStream`. */
  client: objectWithMethods<ContentGenerator>('generateContentStream'),
  model: z.string().refine((model) => model.trim() !== '', { error: 'must be a non-empty string' }),
  scheduler: objectWithMethods<AgentScheduler>('schedule'),
  registry: objectWithMethods<DeclarationSource>('functionDeclarations'),
  /** Model requests allowed per `send` (default 100). When reached with calls still pending, `send` stops with `max_turns`. */
  maxTurns: z.number().int().min(1).default(DEFAULT_MAX_TURNS),
  systemInstruction: z.string().optional(),
});

export type AgentOptions = z.input<typeof agentOptionsSchema>;

export interface SendOptions {
  /** Aborting stops the stream and cancels running calls; `send` then ends with `cancelled`. */
  signal?: AbortSignal;
}

/**
 * The turn loop (Gemini CLI's Turn and useGeminiStream in one class). Each `send` streams a
 * model answer, collects its FunctionCalls, schedules the whole batch once
 * the stream has ended, sends the FunctionResponses back, and repeats until
 * the model answers without calls, the turn limit is reached, the signal is
 * aborted, or the API fails. It never throws for any of these: it yields an
 * AgentEvent per step and ends with a `finished` event holding the outcome.
 * The conversation carries over between sends (a chat session).
 */
export class Agent {
  readonly conversation = new Conversation();
  readonly model: string;
  readonly #client: ContentGenerator;
  readonly #scheduler: AgentScheduler;
  readonly #registry: DeclarationSource;
  readonly #maxTurns: number;
  readonly #systemInstruction: string | undefined;
  #busy = false;

  constructor(options: AgentOptions) {
    const { client, model, scheduler, registry, maxTurns, systemInstruction } = parseOptions(agentOptionsSchema, options, 'Agent');
    this.model = model;
    this.#client = client;
    this.#scheduler = scheduler;
    this.#registry = registry;
    this.#maxTurns = maxTurns;
    this.#systemInstruction = systemInstruction;
  }

  /** True while a `send` is running. */
  get busy(): boolean {
    return this.#busy;
  }

  /** Sends a user prompt and runs the turn loop; see the class comment. One send at a time. */
  async *send(prompt: string | Part[], options: SendOptions = {}): AsyncGenerator<AgentEvent, AgentOutcome> {
    const parts = typeof prompt === 'string' ? (prompt.trim() ? [{ text: prompt }] : []) : prompt;
    if (!Array.isArray(parts) || parts.length === 0) throw new TypeError('Agent.send: prompt must be a non-empty string or Part[]');
    if (this.#busy) throw new Error('Agent.send: a send is already running');
    this.#busy = true;
    try {
      return yield* this.#loop(parts, options.signal ?? new AbortController().signal);
    } finally {
      this.#busy = false;
    }
  }

  async *#loop(prompt: Part[], signal: AbortSignal): AsyncGenerator<AgentEvent, AgentOutcome> {
    const state = { startedAt: Date.now(), turns: 0, toolCalls: 0, text: '', usage: emptyUsage() };
    const outcome = (status: AgentStatus, error?: AgentError): AgentOutcome => ({
      status,
      text: state.text,
      turns: state.turns,
      toolCalls: state.toolCalls,
      usage: state.usage,
      durationMs: Date.now() - state.startedAt,
      ...(error ? { error } : {}),
    });
    const finish = function* (status: AgentStatus, error?: AgentError): Generator<AgentEvent, AgentOutcome> {
      const result = outcome(status, error);
      yield { type: 'finished', outcome: result };
      return result;
    };

    this.conversation.addUser(prompt);
    for (;;) {
      if (signal.aborted) return yield* finish('cancelled', CANCELLED);
      if (state.turns >= this.#maxTurns) {
        return yield* finish('max_turns', {
          code: AgentErrorCode.MAX_TURNS_EXCEEDED,
          message: `Stopped after ${this.#maxTurns} model turn(s) (the turn limit); the model had not finished.`,
        });
      }
      const turn = ++state.turns;
      yield { type: 'turn_started', turn };

      const progress: StreamProgress = { chunks: 0 };
      let result: ModelTurnResult;
      try {
        const stream = await this.#client.generateContentStream({
          model: this.model,
          contents: this.conversation.contents(),
          config: this.#config(signal),
        });
        const reader = readModelTurn(stream, progress);
        for (;;) {
          const step = await reader.next();
          if (step.done) {
            result = step.value;
            break;
          }
          if (step.value.type === 'text') state.text += step.value.text;
          yield step.value;
        }
      } catch (error) {
        if (signal.aborted) return yield* finish('cancelled', CANCELLED);
        return yield* finish('error', classifyApiError(error, { receivedChunks: progress.chunks }));
      }
      state.usage = addUsage(state.usage, result.usage);
      yield { type: 'usage', turn, usage: result.usage };
      if (signal.aborted) return yield* finish('cancelled', CANCELLED);
      if (result.error) return yield* finish('error', result.error);
      if (result.warning) yield { type: 'warning', ...result.warning };

      this.conversation.addModel(result.parts);
      if (result.functionCalls.length === 0) return yield* finish('completed');

      const requests = result.functionCalls.map(toToolCallRequest);
      state.toolCalls += requests.length;
      for (const request of requests) yield { type: 'tool_call', request };
      const completed = yield* this.#runBatch(requests, signal);
      if (completed === undefined) {
        return yield* finish('error', { code: AgentErrorCode.INTERNAL_ERROR, message: 'The scheduler failed; see the tool results.' });
      }
      if (signal.aborted) return yield* finish('cancelled', CANCELLED);
      if (completed.every((call) => call.status === 'cancelled')) {
        // Every call was declined: like gemini-cli, wait for the user instead of telling the model.
        return yield* finish('cancelled', { code: AgentErrorCode.CANCELLED, message: 'The tool calls were declined.' });
      }
    }
  }

  /**
   * Schedules one batch, reports each result in request order, and records
   * the FunctionResponses as the next user turn (also after a cancel, so the
   * history stays valid). Returns undefined if the scheduler itself threw.
   */
  async *#runBatch(requests: ToolCallRequest[], signal: AbortSignal): AsyncGenerator<AgentEvent, CompletedToolCall[] | undefined> {
    let completed: CompletedToolCall[] | undefined;
    let responseParts: Part[];
    try {
      const byId = new Map((await this.#scheduler.schedule(requests, signal)).map((call) => [call.request.callId, call]));
      completed = requests.map((request) => byId.get(request.callId) ?? missingCall(request));
      responseParts = completed.flatMap((call) => call.response.responseParts);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      responseParts = requests.map((request) => ({
        functionResponse: { id: request.callId, name: request.name, response: { error: `Tool call failed: ${message}` } },
      }));
      this.conversation.addUser(responseParts);
      return undefined;
    }
    for (const call of completed) yield { type: 'tool_result', call };
    this.conversation.addUser(responseParts);
    return completed;
  }

  #config(signal: AbortSignal): GenerateContentConfig {
    const declarations = this.#registry.functionDeclarations();
    return {
      abortSignal: signal,
      // The loop reports a broken stream itself rather than have the SDK silently re-request.
      automaticContinuation: false,
      ...(declarations.length > 0 ? { tools: [{ functionDeclarations: declarations }] } : {}),
      ...(this.#systemInstruction ? { systemInstruction: this.#systemInstruction } : {}),
    };
  }
}

const CANCELLED: AgentError = { code: AgentErrorCode.CANCELLED, message: 'Cancelled.' };

/** A scheduler that lost a call would leave the model's call unanswered; answer it with an error instead. */
function missingCall(request: ToolCallRequest): CompletedToolCall {
  const message = 'The scheduler returned no result for this call.';
  return {
    status: 'error',
    request,
    startTime: Date.now(),
    durationMs: 0,
    response: {
      callId: request.callId,
      responseParts: [{ functionResponse: { id: request.callId, name: request.name, response: { error: message } } }],
      error: { type: 'execution_failed', message },
    },
  };
}

export type { TokenUsage };
