// `npm run contracts:asyncapi`: writes docs/asyncapi.json from the zod schemas in libs/contracts
// (built first), and the snapshot of each event type's schema at its schema_version under
// docs/event-schemas/. A snapshot is replaced only by a compatible schema; an incompatible change
// needs a new schema_version (EVENT_SCHEMA_VERSIONS), which gets a new snapshot beside the old.
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const {
  asyncApiDocument,
  eventJsonSchema,
  eventSchemaSnapshotName,
  publishedEventTypes,
  schemaIncompatibilities,
} = require('../libs/contracts/dist');

const docs = join(__dirname, '..', 'docs');
const snapshots = join(docs, 'event-schemas');
const asJson = (value) => `${JSON.stringify(value, null, 2)}\n`;

writeFileSync(join(docs, 'asyncapi.json'), asJson(asyncApiDocument()));
mkdirSync(snapshots, { recursive: true });
let refused = 0;
for (const event of publishedEventTypes()) {
  const file = join(snapshots, eventSchemaSnapshotName(event));
  const schema = eventJsonSchema(event);
  if (existsSync(file)) {
    const problems = schemaIncompatibilities(JSON.parse(readFileSync(file, 'utf8')), schema);
    if (problems.length > 0) {
      refused++;
      process.stderr.write(
        `${event.type} v${event.schemaVersion} changed incompatibly; give it a new schema_version:\n  ${problems.join('\n  ')}\n`,
      );
      continue;
    }
  }
  writeFileSync(file, asJson(schema));
}
process.stdout.write(`docs/asyncapi.json and docs/event-schemas/ written${refused ? `; ${refused} refused` : ''}\n`);
process.exit(refused ? 1 : 0);
