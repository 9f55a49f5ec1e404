// core/path.ts and route declarations: a pattern either parses into the documented shape or is
// refused with a TypeError; prefixes join and normalize without throwing anything else.
import { joinPaths, normalizePrefix, parsePattern, pathInPrefix, prefixApplies } from '../../packages/server/src/core/path.ts';
import { assert, onlyDocumented, timed } from '../lib.mjs';

export function fuzz(data) {
  const text = data.toString('utf8');
  const cut = text.indexOf('\n');
  const prefix = cut === -1 ? '' : text.slice(0, cut);
  const path = cut === -1 ? text : text.slice(cut + 1);
  let pattern;
  try {
    pattern = timed('parsePattern', () => parsePattern(path));
  } catch (err) {
    onlyDocumented(err, [TypeError]);
  }
  if (pattern !== undefined) {
    assert(pattern.path === path, 'the pattern keeps its path');
    assert(new Set(pattern.paramNames).size === pattern.paramNames.length, 'no duplicate parameters');
    const segments = path === '/' ? 0 : path.split('/').length - 1;
    assert(pattern.paramNames.length <= segments, 'at most one parameter per segment');
    assert(pattern.wildcardAt === -1 || pattern.wildcardAt === segments - 1, 'a wildcard only last');
  }
  let normalized;
  try {
    normalized = timed('normalizePrefix', () => normalizePrefix(prefix));
  } catch (err) {
    onlyDocumented(err, [TypeError]);
  }
  if (normalized !== undefined && pattern !== undefined) {
    const joined = timed('joinPaths', () => joinPaths(normalized, path));
    assert(typeof joined === 'string' && joined.startsWith('/'), 'a joined path starts with /');
    assert(['always', 'never', 'runtime'].includes(prefixApplies(normalized, pattern)), 'prefixApplies answers one of three');
    assert(typeof pathInPrefix(path, normalized) === 'boolean', 'pathInPrefix answers a boolean');
  }
}
