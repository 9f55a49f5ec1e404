// The load hook behind strip-types.mjs (runs on Node's loader thread).
import { stripTypeScriptTypes } from 'node:module';

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) return result;
  const source = typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8');
  return { ...result, format: 'module', source: stripTypeScriptTypes(source, { mode: 'strip' }) };
}
