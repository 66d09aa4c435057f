/**
 * What a running tool streams to the scheduler while it works: text so far,
 * or, once the output turned out to be binary, how many bytes arrived.
 */
export type LiveOutput = string | { type: 'binary_detected'; bytesReceived: number } | { type: 'binary_progress'; bytesReceived: number };

export type UpdateOutput = (output: LiveOutput) => void;
