// The texts players race on: plain ASCII (what a keyboard types without dead keys), one
// space between words, no trailing space. Written for this example.

export const PASSAGES: readonly string[] = [
  'The lighthouse keeper counted the ships each night, though none had passed in years. He kept the lamp bright anyway, because a light that waits is still a promise, and promises are the last thing a lonely coast should lose.',
  'Fast code is rarely clever code. It is code that does less: fewer copies, fewer allocations, fewer trips across the network. Measure first, then remove the work nobody asked for, and the speed tends to arrive on its own.',
  'On the morning of the race the town woke early. Bakers lit their ovens, children painted numbers on cardboard, and an old man with a stopwatch walked the course twice, muttering that the hill was steeper than last year.',
  'A good protocol is small enough to fit in your head. Every frame has one shape, every error has a name, and a client written in an afternoon can talk to the server as well as the official one does.',
  'She learned to type on a machine older than her mother, pressing each key until the hammer struck the page. Years later her fingers still flew across the keyboard as if every letter had to be earned.',
  'Rain drummed on the tin roof while the team argued about names. Variables, functions, whole modules were renamed twice before lunch, and by evening everyone agreed the first names had been fine all along.',
];

/** A passage of at least `minChars` characters: the passages joined, repeated as needed (benchmarks: no race ends). */
export function longPassage(minChars: number): string {
  let text = PASSAGES.join(' ');
  while (text.length < minChars) text = `${text} ${PASSAGES.join(' ')}`;
  return text;
}
