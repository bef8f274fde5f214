// `npm run docs:api`: writes docs/openapi.json (the public API's OpenAPI 3.1 document, as the
// gateway serves it at GET /v1/openapi.json) and docs/api.md (the same as a page) from the zod
// schemas, through the built gateway. services/gateway/src/api-reference.unit.test.ts fails
// when either file is stale.
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { publicApiDocument } = require('../services/gateway/dist/openapi');
const { publicApiReference } = require('../services/gateway/dist/api-reference');

const docs = join(__dirname, '..', 'docs');
writeFileSync(join(docs, 'openapi.json'), `${JSON.stringify(publicApiDocument(), null, 2)}\n`);
writeFileSync(join(docs, 'api.md'), publicApiReference());
process.stdout.write('docs/openapi.json and docs/api.md written\n');
