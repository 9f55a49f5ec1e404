// Topic patterns declared with `app.topic()`, and the lookup from a topic to its options.
// A pattern is a topic name in which `*` stands for any run of characters (`room:*` matches
// `room:1` and `room:1:chat`). An exact name wins over patterns; among patterns, the first
// declared wins. Lookups are cached per topic (bounded), so a publish pays one Map read, and
// an app that declares no pattern pays a single field check.
import { isValidTopic } from '../protocol.ts';
import { resolveTopicOptions, type ResolvedTopicOptions, type TopicOptions } from './options.ts';

const CACHE_LIMIT = 10_000;
// `*`, or what a topic may hold (protocol.ts), escaped for a RegExp.
const escapeRegExp = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

interface Compiled {
  readonly match: RegExp;
  readonly options: ResolvedTopicOptions;
}

export class TopicRegistry {
  private readonly exact = new Map<string, ResolvedTopicOptions>();
  private readonly patterns: Compiled[] = [];
  private readonly cache = new Map<string, ResolvedTopicOptions | null>();

  /** True once any pattern was declared. */
  get active(): boolean {
    return this.exact.size > 0 || this.patterns.length > 0;
  }

  define(pattern: string, options: TopicOptions): ResolvedTopicOptions {
    if (typeof pattern !== 'string' || !isValidTopic(pattern.replaceAll('*', 'x'))) {
      throw new TypeError(`Invalid topic pattern ${JSON.stringify(pattern)}: a topic name, with * for any run of characters`);
    }
    if (this.exact.has(pattern) || this.patterns.some((p) => p.options.pattern === pattern))
      throw new TypeError(`topic ${pattern} is already declared`);
    const resolved = resolveTopicOptions(pattern, options);
    if (pattern.includes('*'))
      this.patterns.push({ match: new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`), options: resolved });
    else this.exact.set(pattern, resolved);
    this.cache.clear();
    return resolved;
  }

  /** The options of the pattern `topic` belongs to, or null. */
  lookup(topic: string): ResolvedTopicOptions | null {
    const cached = this.cache.get(topic);
    if (cached !== undefined) return cached;
    let found = this.exact.get(topic) ?? null;
    if (found === null)
      for (const p of this.patterns)
        if (p.match.test(topic)) {
          found = p.options;
          break;
        }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(topic, found);
    return found;
  }

  /** Every declared pattern, in declaration order (exact names first). */
  list(): ResolvedTopicOptions[] {
    return [...this.exact.values(), ...this.patterns.map((p) => p.options)];
  }
}
