// One player's typing against the passage, character by character. No clock here: the room
// passes the times in.
//
// The model (the usual one in typing games): `typingIndex` counts the characters typed right
// from the start of the passage. A wrong character opens a run of wrong characters that must
// be backspaced before the passage goes on; at most `maxWrong` of them are kept. Backspace
// removes the last wrong character, or else steps back over a correct one.

export interface TypeResult {
  /** Characters of the batch that were taken (the rest came past `maxWrong` or the end). */
  accepted: number;
  /** True when this batch typed the last character of the passage. */
  finished: boolean;
}

export class Typing {
  readonly passage: string;
  readonly maxWrong: number;
  /** Correct characters from the start of the passage. */
  typingIndex = 0;
  /** Wrong characters typed after the first mistake, not yet backspaced. */
  wrong = 0;
  /** Every character typed (keystrokes taken). */
  typed = 0;
  /** Characters typed wrong. */
  errors = 0;

  constructor(passage: string, maxWrong: number) {
    this.passage = passage;
    this.maxWrong = maxWrong;
  }

  get finished(): boolean {
    return this.typingIndex === this.passage.length;
  }

  /** Types `text` (already validated as 1..maxBatch characters). */
  type(text: string): TypeResult {
    let accepted = 0;
    for (let i = 0; i < text.length && !this.finished; i++) {
      if (this.wrong > 0 || text.charCodeAt(i) !== this.passage.charCodeAt(this.typingIndex)) {
        if (this.wrong >= this.maxWrong) break;
        this.wrong++;
        this.errors++;
      } else {
        this.typingIndex++;
      }
      this.typed++;
      accepted++;
    }
    return { accepted, finished: this.finished };
  }

  /** False when there was nothing to remove. */
  backspace(): boolean {
    if (this.wrong > 0) this.wrong--;
    else if (this.typingIndex > 0) this.typingIndex--;
    else return false;
    return true;
  }

  /** Right characters / all characters typed, 0..1 (1 before the first keystroke). */
  get accuracy(): number {
    return this.typed === 0 ? 1 : (this.typed - this.errors) / this.typed;
  }
}

/** Words per minute, the usual way: five characters are a word; `elapsedMs` since the start. */
export function wordsPerMinute(correctChars: number, elapsedMs: number): number {
  if (elapsedMs <= 0) return 0;
  return correctChars / 5 / (elapsedMs / 60_000);
}

/** One decimal, for the wire. */
export const round1 = (n: number): number => Math.round(n * 10) / 10;
