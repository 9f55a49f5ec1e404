// The API reference page: Swagger UI from the swagger-ui-dist package, read once into memory
// and served by the app itself (no CDN: the page works offline and under a strict
// `script-src 'self'` policy, which is why the start-up script is a file, not inline).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ReferenceFiles {
  /** The page's path without a trailing slash ('' for the root). */
  readonly base: string;
  /** Relative name under the docs path → [content type, body]. */
  readonly files: ReadonlyMap<string, readonly [string, string]>;
  readonly page: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page at `base` (e.g. `/docs`), loading its assets from below it and the document from `documentUrl`. */
export function referenceFiles(base: string, documentUrl: string, title: string): ReferenceFiles {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const read = (name: string) => readFileSync(join(dist, name), 'utf8');
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(documentUrl)}, dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${base}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`;
  const files = new Map<string, readonly [string, string]>([
    ['swagger-ui.css', ['text/css; charset=utf-8', read('swagger-ui.css')]],
    ['swagger-ui-bundle.js', ['text/javascript; charset=utf-8', read('swagger-ui-bundle.js')]],
    ['init.js', ['text/javascript; charset=utf-8', init]],
  ]);
  return { base, files, page };
}
