// How a cluster worker ends while it may hold connections: process.exit() in the app, an abort
// from the primary after a fatal error (leave()), or a graceful close or drain (closeAndLeave()).
// uWS constrains the order (docs/cluster.md, Faults):
//
// 1. out of the acceptor first: the acceptor, in the primary's thread, hands an accepted socket
//    to this worker by queueing it on this thread's uWS loop; once the loop is freed that is a
//    use-after-free (SIGSEGV);
// 2. then every connection dropped, more than once, a loop turn apart: the sockets the acceptor
//    queued just before it let go are adopted on this thread's next loop turn, after a first
//    close; a socket still open when the thread ends aborts the whole process (SIGABRT: Node's
//    uv_loop_close() finds uWS's poll handle open);
// 3. then the thread ends (Node's own process.exit()), by itself: a thread terminated from the
//    primary stops wherever it is, uWS loop included (a SIGSEGV in one CI run of the SIGTERM test).
//
// A plain process.exit() gives none of these loop turns: the thread ends within the turn that
// called it. So in a worker, process.exit() starts this and returns (see installExit()).
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

/** How long to wait for the primary to take this worker out of its acceptor before going anyway. */
export const RELEASE_TIMEOUT = 2000;

export interface LeaveSteps {
  /** Resolves once the primary took this worker out of its acceptor (absent: the worker is in none). */
  release?: () => Promise<void>;
  /** Drops every connection now; each call drops what arrived since the last. */
  drop: () => void;
  /** Ends the thread: Node's own process.exit(). */
  exit: () => void;
}

/** Out of the acceptor, connections dropped over a few loop turns, then the thread ends. */
export async function leave(steps: LeaveSteps): Promise<void> {
  if (steps.release !== undefined) await withTimeout(steps.release(), RELEASE_TIMEOUT);
  await dropAndExit(steps.drop, steps.exit);
}

/**
 * The graceful end (the primary's 'close' and 'drain'; it took this worker out of its acceptor
 * before sending either): the sockets the acceptor queued just before are adopted first and
 * their requests served, then `close()` drains as a server does, then the thread ends as in
 * leave(). `failed` hears a close that threw; the thread ends all the same.
 */
export async function closeAndLeave(
  close: () => Promise<void> | undefined,
  drop: () => void,
  failed: (error: unknown) => void,
  exit: () => void,
): Promise<void> {
  // Adopted on this loop's next turns, their request bytes read on a later poll: until then
  // the close sees no request in flight on them and would cut them (ECONNRESET at the client).
  await nextTurn();
  await sleep(ADOPTION_GRACE);
  await nextTurn();
  try {
    await close();
  } catch (error) {
    failed(error);
  }
  await dropAndExit(drop, exit);
}

/** How long a worker leaving its acceptor waits for the sockets queued for it to arrive and start their requests. */
const ADOPTION_GRACE = 10;

async function dropAndExit(drop: () => void, exit: () => void): Promise<void> {
  drop();
  // The acceptor's last queued sockets may be adopted after that drop: in the same pass over
  // the loop's wake-ups as the release message (libuv's order, not ours), or on a later poll.
  // Drop again on the next turn and after a short pause. (Margin, not measured need: the churn
  // test also passed 8 runs of 8 without these two; they cost about 5 ms.)
  await nextTurn();
  drop();
  await sleep(5);
  drop();
  await nextTurn(); // closed sockets' close callbacks run before the thread's loop is torn down
  exit();
}

/**
 * Replaces process.exit in this worker thread: the call records the exit code (validated by
 * Node, as process.exit does) and starts `start()` once; it returns to its caller, which runs
 * on to the end of its task (the worker ends a few milliseconds later). Returns Node's exit.
 */
export function installExit(start: () => void): (code?: number) => never {
  const nodeExit = process.exit.bind(process) as (code?: number) => never;
  process.exit = ((code?: number | string | null) => {
    if (code !== undefined) process.exitCode = code; // throws on a bad code, as process.exit(code) does
    start();
  }) as typeof process.exit;
  return nodeExit;
}

function withTimeout(done: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}
