import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publicApiReference } from './api-reference';
import { publicApiDocument } from './openapi';

const docs = join(__dirname, '..', '..', '..', 'docs');

describe('the public API reference that ships with the code', () => {
  it('docs/openapi.json is what the gateway serves (run `npm run docs:api` after a change)', () => {
    expect(JSON.parse(readFileSync(join(docs, 'openapi.json'), 'utf8'))).toEqual(
      JSON.parse(JSON.stringify(publicApiDocument())),
    );
  });

  it('docs/api.md is generated from that document now (run `npm run docs:api` after a change)', () => {
    expect(readFileSync(join(docs, 'api.md'), 'utf8')).toBe(publicApiReference());
  });

  it('documents every operation of the document, with a section for every shared schema it links to', () => {
    const page = publicApiReference();
    const document = publicApiDocument();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) expect(page).toContain(`### \`${method.toUpperCase()} /v1${path}\``);
    }
    for (const [, name] of page.matchAll(/\]\(#schema-([a-z0-9_]+)\)/g)) {
      expect(page).toContain(`<a id="schema-${name}"></a>`);
    }
  });
});
