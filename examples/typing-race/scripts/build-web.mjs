// Builds the pages (web/, SvelteKit) when they are not built or their inputs changed since the
// last build: `npm start` runs it first, so a fresh clone needs only `npm install && npm start`.
// `--force` builds anyway. Plain JS: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('../web/', import.meta.url));
const STAMP = join(WEB, 'build', '.inputs');

function hashTree(hash, dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) hashTree(hash, abs);
    else if (entry.isFile()) hash.update(relative(WEB, abs)).update('\0').update(readFileSync(abs)).update('\0');
  }
}

/** What the build depends on: the pages, the game's event types, the config, the adapter. */
export function inputsKey() {
  const require = createRequire(join(WEB, 'package.json'));
  const hash = createHash('sha256');
  hashTree(hash, join(WEB, 'src'));
  hashTree(hash, join(WEB, 'static'));
  hash.update(readFileSync(join(WEB, 'vite.config.js')));
  hash.update(readFileSync(fileURLToPath(new URL('../src/game/events.ts', import.meta.url))));
  for (const pkg of ['@sveltejs/kit', 'svelte', 'vite', '@tachyon/sveltekit', '@tachyon/client']) {
    hash.update(pkg).update(readFileSync(require.resolve(`${pkg}/package.json`)));
  }
  // The adapter's own output (a workspace package: its dist changes without a version bump).
  hashTree(hash, join(require.resolve('@tachyon/sveltekit/package.json'), '..', 'dist'));
  return hash.digest('hex');
}

export function buildWeb({ force = false } = {}) {
  const key = inputsKey();
  if (!force && existsSync(join(WEB, 'build', 'handler.js')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === key) return false;
  const vite = join(createRequire(join(WEB, 'package.json')).resolve('vite/package.json'), '..', 'bin', 'vite.js');
  const started = performance.now();
  console.log('typing-race: building the pages (vite build in web/)…');
  rmSync(STAMP, { force: true });
  // SvelteKit ends every build with "Run npm run preview to preview your production build
  // locally": web/ has no such script (server.ts serves the build), so that line is dropped.
  const r = spawnSync(process.execPath, [vite, 'build'], {
    cwd: WEB,
    stdio: ['inherit', 'pipe', 'inherit'],
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  process.stdout.write(
    r.stdout
      .split('\n')
      .filter((line) => !line.includes('npm run preview'))
      .join('\n'),
  );
  if (r.status !== 0) throw new Error(`vite build failed (exit ${r.status})`);
  writeFileSync(STAMP, key);
  console.log(`typing-race: pages built in ${((performance.now() - started) / 1000).toFixed(1)} s (server.ts serves them: npm start)`);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    buildWeb({ force: process.argv.includes('--force') });
  } catch (e) {
    console.error(`typing-race: ${e.message}`);
    process.exit(1);
  }
}
