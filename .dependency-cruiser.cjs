/**
 * The layers of the project's code, enforced by `npm run lint` (docs/architecture.md draws them).
 *
 * shared/ is a stack of folders: a folder may import only folders below it in SHARED_LAYERS
 * (bottom first). A service imports shared/ only, never another service (all-in-one, which is the
 * other services in one process, is the one exception). No cycles between files, nor between folders.
 * Test code (tests/, *.test.ts) sits above everything and is left out of the layer rules.
 */
const SHARED_LAYERS = [
  'domain', // events, deciders, the domain's errors: pure, imports nothing of the project
  'logging', // structured logger
  'errors', // HTTP error vocabulary, asError, database-unavailable classification
  'infra', // PostgreSQL helpers (transactions, named statements, embedded server)
  'media', // image sniffing and checks
  'formats', // brain-imaging file inspectors (NIfTI, TIFF, Zarr...)
  'config', // configuration read and validated at start-up
  'eventStore', // the EventStore port and its adapters
  'runtime', // low-level helpers: backoff, sleeps, supervised loops, orderly close, follower checkpoints
  'metrics', // Prometheus registry and the process's metrics
  'blobStore', // the BlobStore port and its adapters
  'tus', // resumable uploads: tus stores over the BlobStore, their state and locks in PostgreSQL
  'multipart', // multipart request bodies streamed into stored files
  'projections', // projection runner, checkpoints, progress, leader lease
  'search', // the SearchIndex port and its adapters
  'integrationBus', // the integration bus port and its Kafka adapter
  'commandHandling', // load, decide, append with retries; reservations and ids
  'auth', // principals, passwords, access tokens
  'blobSweep', // deletes stored bytes no event refers to
  'views', // read-model rows shaped for API answers
  'audit', // the event history as auditors read it: audited events, ledger chain, replays
  'http', // the HTTP edge: dispatcher, validation, error mapping, idempotency, rate limits, ops handler
  'query', // list/filter/pagination helpers of the query side
  'apiContract', // the OpenAPI document of every route
  'platform', // the composition root: infrastructure, service platform, run until a signal
];

const TEST_CODE = '(^tests/|\\.test\\.ts$)';
const alternatives = (names) => `(${names.join('|')})`;

const layerRules = SHARED_LAYERS.map((layer, index) => {
  const above = SHARED_LAYERS.slice(index + 1);
  return {
    name: `layer-${layer}`,
    comment: `shared/${layer} may import only the layers below it: ${SHARED_LAYERS.slice(0, index).join(', ') || 'none'}.`,
    severity: 'error',
    from: { path: `^shared/${layer}/`, pathNot: TEST_CODE },
    to: { path: above.length > 0 ? `^shared/${alternatives(above)}/` : '^$', pathNot: TEST_CODE },
  };
}).filter((rule) => rule.to.path !== '^$');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files never import each other in a circle.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Folders never depend on each other in a circle.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-folder-has-a-layer',
      comment: `Every folder of shared/ has its place in SHARED_LAYERS (.dependency-cruiser.cjs).`,
      severity: 'error',
      from: { path: '^shared/', pathNot: `^shared/${alternatives(SHARED_LAYERS)}/` },
      to: {},
    },
    ...layerRules,
    {
      name: 'shared-not-to-services',
      comment: 'shared/ is below every service: it never imports one.',
      severity: 'error',
      from: { path: '^shared/', pathNot: TEST_CODE },
      to: { path: '^(services|cli)/' },
    },
    {
      name: 'service-not-to-other-service',
      comment: 'A service imports shared/ only; what two services need lives in shared/.',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: `${TEST_CODE}|^services/all-in-one/` },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'production-not-to-tests',
      comment: 'Only test code imports tests/.',
      severity: 'error',
      from: { pathNot: TEST_CODE },
      to: { path: '^tests/' },
    },
    {
      name: 'cli-not-to-server',
      comment: 'The command-line client talks HTTP; it imports none of the server code.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(services|shared)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves (a #shared/… specifier names an existing file).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Test code is checked for file cycles by tsc and jest, not for layers: colocated tests would
    // otherwise draw folder edges that production code does not have.
    exclude: { path: ['^(dist|node_modules|data)/', TEST_CODE] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // "#shared/x" resolves through package.json "imports" ("./shared/*.ts"), read by enhanced-resolve.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.json', '.d.ts'],
    },
    metrics: true,
    cache: false,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
