/**
 * How to get a Docker engine, in one sentence without its end: every message
 * that says the engine does not answer (`exec`, `serve`, `serve --tenants`,
 * `sandbox build`) ends with it, so a user meets one piece of advice. Kept
 * apart from engine.ts so that the shell thread can say it without loading
 * dockerode.
 */
export const HOW_TO_GET_AN_ENGINE =
  "Run `toolcell sandbox setup` (starts Docker, installing Debian's docker.io when there is no engine, and builds the image), or point DOCKER_HOST at an engine";
