/** The default model of `toolcell run` and `toolcell chat`. */
export const DEFAULT_MODEL = 'gemini-2.5-flash';

/** Model requests allowed per `Agent.send` unless told otherwise. */
export const DEFAULT_MAX_TURNS = 100;
