/**
 * The layer order of src/ (ARCHITECTURE.md), checked on every `npm test`:
 * a module may import its own layer and the layers below it, never one
 * above, and no import cycle may exist anywhere in src/.
 */
const LAYERS = [
  { name: 'core', paths: ['src/errors\\.ts$', 'src/paths\\.ts$', 'src/version\\.ts$', 'src/until-aborted\\.ts$', 'src/deadline\\.ts$', 'src/contracts/'] },
  { name: 'foundations', paths: ['src/fs/', 'src/config/', 'src/telemetry/', 'src/egress/', 'src/secrets/'] },
  { name: 'policy', paths: ['src/policy/'] },
  { name: 'backends', paths: ['src/backends/'] },
  { name: 'shell', paths: ['src/shell/'] },
  { name: 'tools', paths: ['src/tools/', 'src/worker-pool/'] },
  { name: 'registry', paths: ['src/registry/', 'src/discovery/'] },
  { name: 'scheduler', paths: ['src/scheduler/'] },
  { name: 'agent-and-mcp', paths: ['src/agent/', 'src/mcp/'] },
  { name: 'runtime', paths: ['src/runtime/'] },
  { name: 'ui', paths: ['src/ui/'] },
  { name: 'hosting', paths: ['src/hosting/'] },
  { name: 'cli', paths: ['src/cli/', 'src/index\\.ts$'] },
];

const anyOf = (paths) => `^(${paths.join('|')})`;

const layerRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `${layer.name}-points-down`,
  comment: `${layer.name} (${layer.paths.join(', ')}) may only import its own layer and those below it; see ARCHITECTURE.md`,
  severity: 'error',
  from: { path: anyOf(layer.paths) },
  to: { path: anyOf(LAYERS.slice(index + 1).flatMap((above) => above.paths)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle ties modules together so neither can be understood or tested alone',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'hosting-through-its-index',
      comment:
        'Outside src/hosting/, hosting is used through src/hosting/index.ts only (the library door, kept light for CLI start-up); export what is needed there. Tests may reach inside.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/hosting/' },
      to: { path: '^src/hosting/', pathNot: '^src/hosting/index\\.ts$' },
    },
    {
      name: 'every-module-in-a-layer',
      comment: 'A new top-level folder of src/ needs a place in the layer order (LAYERS above and ARCHITECTURE.md)',
      severity: 'error',
      from: { path: '^src/', pathNot: anyOf(LAYERS.flatMap((layer) => layer.paths)) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
