// app.requestAll() between servers over a broker bus (docs/realtime.md, "Acknowledged
// broadcasts"; docs/protocol.md, "Bus frames"). The asking server sends an Ask frame on the
// control channel every server listens to (the presence channel); each other server asks its
// own subscribers of the topic and sends its Answer to the asker's reply channel (a name no
// topic can take: it has quotes), split into frames under maxMessageSize. The asker waits for
// every server that presence says has subscribers of the topic, or until the clients' timeout
// plus a margin: a server that does not answer (gone, cut off, too slow) is logged, not an
// error. Everything that arrives is checked: a bad Ask or Answer is dropped with a log line.
import type { Logger } from '../../../core/logger.ts';
import type { BusAnswer, BusAsk, BusHost } from '../bus.ts';
import { encodeFrame, FrameKind, HEADER_BYTES, originOf, PROCESS_BYTES } from './frame.ts';

/** Each server gets this long past the clients' timeout to send its answer (broker hop, GC pauses on busy machines). */
export const SERVER_MARGIN_MS = 2000;
/** Asks in flight at once from this server; past it askAll() answers with no other server (and logs). */
const MAX_PENDING = 1024;
/** Room kept in a frame for the answer's envelope (`{"ask":…,"part":…}`) and its header. */
const ENVELOPE_BYTES = 256;
const CODES = new Set(['TIMEOUT', 'CLOSED', 'CLIENT_ERROR', 'NO_HANDLER', 'TOO_MANY_REQUESTS', 'DROPPED']);

/** What the exchange needs from its bus. */
export interface ExchangeLink {
  readonly origin: Buffer;
  /** True in a cluster() worker with its own connection: the origin's last 2 bytes are its worker id. */
  readonly shared: boolean;
  readonly maxMessageSize: number;
  readonly logger: Logger;
  readonly host: BusHost | null;
  /** Sends a frame (queued when the broker is slow); false when dropped. `null`: the control channel. */
  send(topic: string | null, frame: Buffer): boolean;
  /** Origins with subscribers of `topic` (presence), or null when presence is off. */
  holders(topic: string): Set<string> | null;
  /** A bad frame: logged, counted. */
  reject(topic: string | null, reason: string): void;
}

interface Pending {
  answers: BusAnswer[];
  /** Origins still expected (null: unknown, wait for the deadline). */
  waiting: Set<string> | null;
  /** Parts received and expected per answering origin. */
  parts: Map<string, [got: number, of: number]>;
  timer: NodeJS.Timeout;
  done: (answers: BusAnswer[]) => void;
  topic: string;
}

/** The reply channel of a bus with this origin (hex): quotes keep it apart from every topic. */
export const replyTopic = (origin: string) => `"answers:${origin}"`;

export class RequestAllExchange {
  private readonly link: ExchangeLink;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  /** This bus's reply channel (fixed at start: shareOrigin may change the origin before). */
  readonly reply: string;

  constructor(link: ExchangeLink) {
    this.link = link;
    this.reply = replyTopic(link.origin.toString('hex'));
  }

  /** Names this process in socket ids: the 6 bytes the workers of a cluster() share, as hex. */
  get server(): string {
    return this.link.origin.subarray(0, PROCESS_BYTES).toString('hex');
  }

  private get prefix(): string {
    return `${this.server}:${this.link.shared ? this.link.origin.readUInt16BE(PROCESS_BYTES) : 0}:`;
  }

  /** Asks the other servers (bus.askAll). */
  ask(ask: BusAsk): Promise<BusAnswer[]> {
    if (this.pending.size >= MAX_PENDING) {
      this.link.logger.warn(
        { topic: ask.topic, pending: this.pending.size },
        'app.requestAll(): too many in flight, other servers not asked',
      );
      return Promise.resolve([]);
    }
    const id = ++this.next;
    const frame = encodeFrame(this.link.origin, FrameKind.Ask, JSON.stringify({ id, ...ask }));
    if (!this.link.send(null, frame)) {
      this.link.logger.warn({ topic: ask.topic }, 'app.requestAll(): bus queue full, other servers not asked');
      return Promise.resolve([]);
    }
    const waiting = this.link.holders(ask.topic);
    if (waiting !== null && waiting.size === 0) return Promise.resolve([]);
    // No timeout (0) still ends: presence tells who to wait for; without it, the margin alone.
    const ms = (ask.timeout === 0 && waiting !== null ? 2 ** 31 - 1 - SERVER_MARGIN_MS : ask.timeout) + SERVER_MARGIN_MS;
    return new Promise((done) => {
      const timer = setTimeout(() => this.finish(id, true), ms);
      this.pending.set(id, { answers: [], waiting, parts: new Map(), timer, done, topic: ask.topic });
    });
  }

  private finish(id: number, late: boolean): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (late && p.waiting !== null && p.waiting.size > 0)
      this.link.logger.warn(
        { topic: p.topic, servers: [...p.waiting] },
        'app.requestAll(): servers did not answer in time; their subscribers are not counted',
      );
    p.done(p.answers);
  }

  /** An Ask from another server: this process's subscribers answer. */
  receiveAsk(frame: Uint8Array): void {
    const host = this.link.host;
    if (host?.requestAll === undefined) return;
    const ask = parse(frame);
    const id = ask?.id;
    if (!Number.isSafeInteger(id) || typeof ask.topic !== 'string' || typeof ask.event !== 'string' || !validTimeout(ask.timeout))
      return this.link.reject(null, 'a malformed requestAll ask');
    const to = replyTopic(originOf(frame));
    host.requestAll({ topic: ask.topic, event: ask.event, data: ask.data, timeout: ask.timeout }, this.prefix).then(
      (answer) => this.sendAnswer(to, id, answer),
      (err: unknown) => {
        this.link.reject(null, `a requestAll ask refused: ${err instanceof Error ? err.message : String(err)}`);
        this.sendAnswer(to, id, { replies: [], missing: [] });
      },
    );
  }

  /** The answer in frames under maxMessageSize; an entry too big alone becomes a DROPPED miss. */
  private sendAnswer(to: string, ask: number, answer: BusAnswer): void {
    const room = this.link.maxMessageSize - ENVELOPE_BYTES;
    const chunks: [replies: string[], missing: string[]][] = [[[], []]];
    let size = 0;
    const add = (list: 0 | 1, json: string) => {
      const bytes = Buffer.byteLength(json) + 1;
      if (size + bytes > room && size > 0) {
        chunks.push([[], []]);
        size = 0;
      }
      chunks.at(-1)![list].push(json);
      size += bytes;
    };
    for (const r of answer.replies) {
      const json = JSON.stringify(r);
      if (Buffer.byteLength(json) <= room) add(0, json);
      else add(1, JSON.stringify({ id: r.id, code: 'DROPPED', message: 'the reply is over the bus maxMessageSize' }));
    }
    for (const m of answer.missing) add(1, JSON.stringify(m));
    chunks.forEach(([replies, missing], i) => {
      const json = `{"ask":${ask},"part":${i},"parts":${chunks.length},"replies":[${replies.join(',')}],"missing":[${missing.join(',')}]}`;
      if (!this.link.send(to, encodeFrame(this.link.origin, FrameKind.Answer, json)))
        this.link.logger.warn({ ask }, 'app.requestAll(): bus queue full, answer to another server dropped');
    });
  }

  /** An Answer (part) on this bus's reply channel. */
  receiveAnswer(frame: Uint8Array): void {
    const a = parse(frame);
    const problem = checkAnswer(a);
    if (problem !== null) return this.link.reject(this.reply, `a malformed requestAll answer: ${problem}`);
    const p = this.pending.get(a.ask);
    if (p === undefined) return this.link.logger.debug({ ask: a.ask }, 'bus: requestAll answer for no pending ask');
    const from = originOf(frame);
    const seen = p.parts.get(from) ?? [0, a.parts];
    if (seen[1] !== a.parts || seen[0] >= a.parts) return this.link.reject(this.reply, 'a requestAll answer with inconsistent parts');
    seen[0]++;
    p.parts.set(from, seen);
    p.answers.push({ replies: a.replies, missing: a.missing });
    if (seen[0] < seen[1] || p.waiting === null) return;
    p.waiting.delete(from);
    if (p.waiting.size === 0) this.finish(a.ask, false);
  }

  /** The bus closes: every pending ask resolves with what arrived. */
  close(): void {
    for (const id of [...this.pending.keys()]) this.finish(id, false);
  }
}

function parse(frame: Uint8Array): any {
  try {
    return JSON.parse(Buffer.from(frame.buffer, frame.byteOffset + HEADER_BYTES, frame.byteLength - HEADER_BYTES).toString());
  } catch {
    return undefined;
  }
}

const validTimeout = (t: unknown) => typeof t === 'number' && Number.isInteger(t) && t >= 0 && t < 2 ** 31;

/** Why an answer is unusable, or null; checks every entry, since they go into the app's result as they are. */
function checkAnswer(a: any): string | null {
  if (typeof a !== 'object' || a === null) return 'not a JSON object';
  if (!Number.isSafeInteger(a.ask)) return 'no ask id';
  if (!Number.isSafeInteger(a.parts) || a.parts < 1 || !Number.isSafeInteger(a.part) || a.part < 0 || a.part >= a.parts) return 'bad parts';
  if (!Array.isArray(a.replies) || !Array.isArray(a.missing)) return 'no replies or missing lists';
  for (const r of a.replies) if (typeof r !== 'object' || r === null || typeof r.id !== 'string') return 'a reply without an id';
  for (const m of a.missing)
    if (typeof m !== 'object' || m === null || typeof m.id !== 'string' || !CODES.has(m.code) || typeof m.message !== 'string')
      return 'a missing entry without id, known code and message';
  return null;
}
