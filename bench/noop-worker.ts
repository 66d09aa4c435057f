/** The baseline's Piscina worker: the same no-op as the `noop` tool, with nothing around it. */
export default function noop(): string {
  return 'ok';
}
