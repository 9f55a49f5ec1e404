// Publish validation for topics declared with `validate: true` (app.topic): the event must be
// one the topic declares and its data must fit the event's schema. A development aid: the
// hub calls this only once such a topic exists, so apps without one pay a field check.
import type { ResolvedTopicOptions } from './options.ts';

/** Throws a TypeError naming the topic, the event and the issues when the publish does not fit. */
export function checkPublished(options: ResolvedTopicOptions | null, topic: string, event: string, data: unknown): void {
  if (options === null || !options.validate) return;
  const events = options.events!; // validate requires events (options.ts)
  const schema = events[event];
  const where = `publish to ${topic} (topic ${options.pattern})`;
  if (schema === undefined)
    throw new TypeError(`${where}: event ${JSON.stringify(event)} is not declared; declared: ${Object.keys(events).join(', ') || 'none'}`);
  const result = schema['~standard'].validate(data);
  if (result instanceof Promise)
    throw new TypeError(`${where}: the schema of event ${event} is asynchronous; publish validation needs a synchronous schema`);
  if (result.issues !== undefined) {
    const issues = result.issues.map(
      (i) => `${(i.path ?? []).map((p) => (typeof p === 'object' ? p.key : p)).join('.') || '(data)'}: ${i.message}`,
    );
    throw new TypeError(`${where}: event ${event} data does not fit its schema: ${issues.join('; ')}`, { cause: result.issues });
  }
}
