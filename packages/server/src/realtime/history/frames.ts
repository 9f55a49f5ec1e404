// The `subscribed` answer on a history topic carries the position the client is now at, and,
// when it asked to recover, whether it did (docs/protocol.md, "Recovery").
import type { Position } from './store.ts';

export function positionedSubscribedFrame(topic: string, ref: number | undefined, at: Position, recovered: boolean | undefined): string {
  const r = ref === undefined ? '' : `,"ref":${ref}`;
  const rec = recovered === undefined ? '' : `,"recovered":${recovered}`;
  return `{"type":"subscribed","topic":${JSON.stringify(topic)}${r},"offset":${at.offset},"epoch":"${at.epoch}"${rec}}`;
}
