// Liveness for the container's HEALTHCHECK (Dockerfile) and orchestrators.
import { json } from '@sveltejs/kit';
import type { RequestHandler } from './$types';

export const GET: RequestHandler = () => json({ status: 'ok' }, { headers: { 'cache-control': 'no-store' } });
