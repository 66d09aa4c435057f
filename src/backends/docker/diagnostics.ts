/**
 * What the sandbox says that is not a command's output, on stderr (stdout
 * may carry a protocol, as with `serve --stdio`):
 * - debug lines, such as the supervisor's LOG frames ("reaper did not finish
 *   a kill"), only when the user sets TOOLCELL_DEBUG;
 * - warnings a user must see, such as workspace entries the sandbox user
 *   could not be given access to, always, once per text per process (every
 *   container of a workspace would otherwise repeat them).
 *
 * Text from inside the container is untrusted: control characters are
 * replaced so it cannot drive the user's terminal.
 */

// eslint-disable-next-line no-control-regex -- matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** True when TOOLCELL_DEBUG is set to anything but "", "0" or "false". */
export function debugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env['TOOLCELL_DEBUG']?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

function printable(text: string): string {
  return text.replace(CONTROL, '?').replace(/\n/g, ' | ');
}

/** Writes a debug line when TOOLCELL_DEBUG is on. */
export function sandboxDebug(message: string): void {
  if (debugEnabled()) process.stderr.write(`toolcell: sandbox debug: ${printable(message)}\n`);
}

const warned = new Set<string>();

/** Writes a warning, once per text for the life of the process. */
export function sandboxWarnOnce(message: string): void {
  const text = printable(message);
  if (warned.has(text)) return;
  warned.add(text);
  process.stderr.write(`toolcell: warning: ${text}\n`);
}
