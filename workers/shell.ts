/**
 * Entry of the shell thread (the data plane for shell commands): every
 * backend, PTY and output pipeline lives here. Started by ShellService.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ShellThreadSettings } from '../src/shell/protocol.js';
import { startShellThread } from '../src/shell/thread/shell-thread.js';

if (!parentPort) throw new Error('workers/shell.js must be started as a worker thread (by ShellService)');
startShellThread(parentPort, workerData as ShellThreadSettings);
