/** The shell tool's name; the policy engine parses this tool's `command` argument. */
export const SHELL_TOOL_NAME = 'run_shell_command';
