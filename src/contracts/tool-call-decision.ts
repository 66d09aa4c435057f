/** How a tool call came to run (or not): set by the scheduler, recorded by telemetry. */
export type ToolCallDecision = 'auto' | 'accept' | 'accept_always' | 'modify' | 'reject' | 'denied';
