/**
 * `serve --sandbox-cpus` moves the server off the sandboxes' CPUs only when
 * the engine's sandboxes run on this machine: DOCKER_HOST naming a Unix
 * socket or a loopback address is this machine, any other host is not.
 */
import test from 'ava';
import { engineIsRemote } from '../../src/cli/server-cpus.js';

test('an engine over a Unix socket, or TCP or SSH to a loopback address, is on this machine', (t) => {
  for (const host of [
    undefined,
    '',
    'unix:///var/run/docker.sock',
    'tcp://127.0.0.1:2375',
    'tcp://127.1.2.3:2376',
    'tcp://localhost:2375',
    'tcp://LOCALHOST:2375',
    'tcp://[::1]:2375',
    'ssh://root@localhost',
  ]) {
    t.false(engineIsRemote(host), String(host));
  }
});

test('an engine over TCP or SSH to any other host is remote, and so is a DOCKER_HOST that is no URL', (t) => {
  for (const host of [
    'tcp://10.0.0.2:2376',
    'ssh://root@10.0.0.2',
    'tcp://docker.example.com:2376',
    'tcp://127.0.0.1.example.com:2375',
    'tcp://[::2]:2375',
    'not a url',
  ]) {
    t.true(engineIsRemote(host), host);
  }
});
