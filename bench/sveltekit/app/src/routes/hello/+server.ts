// A trivial endpoint: what the adapter itself costs, with almost no SvelteKit work.
export const GET = () => new Response('hello world', { headers: { 'content-type': 'text/plain' } });
