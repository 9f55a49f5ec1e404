#!/usr/bin/env node
// @ts-check
// `npm create tachyon@latest [folder] [-- --template api|realtime|sveltekit --pm npm|pnpm|yarn --no-install]`
// Writes a new app from templates/<name> (over templates/_shared) into an empty folder, then
// installs its dependencies. In a terminal it asks for what the flags did not say; otherwise
// the flags are the whole input and a missing one is an error, never a hang on stdin.
// Plain JavaScript with no dependencies: it runs on whatever Node the user has, before
// anything is installed, so it can say "Node 22 or newer" itself on an older one.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';

const TEMPLATES = {
  api: 'an HTTP API: routes, validation with zod, tests',
  realtime: 'a realtime chat: app.ws, topics, the browser client in a page',
  sveltekit: 'a SvelteKit app on @tachyon/sveltekit, with src/hooks.ws.ts',
};
const MANAGERS = ['npm', 'pnpm', 'yarn'];
/** npm strips .gitignore from packages: the templates carry these names instead. */
const RENAMES = { _gitignore: '.gitignore', _dockerignore: '.dockerignore' };
const TEMPLATE_ROOT = fileURLToPath(new URL('../templates/', import.meta.url));
const USAGE = `Usage: npm create tachyon@latest [folder] -- [--template ${Object.keys(TEMPLATES).join('|')}] [--pm ${MANAGERS.join('|')}] [--no-install]`;

class UsageError extends Error {}

/**
 * @param {string[]} argv
 * @returns {{ dir?: string, template?: string, pm?: string, install: boolean, help: boolean }}
 */
export function parseArgs(argv) {
  /** @type {{ dir?: string, template?: string, pm?: string, install: boolean, help: boolean }} */
  const out = { install: true, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const [flag, inline] = arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '' || (inline === undefined && v.startsWith('-'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--template' || flag === '-t') out.template = value();
    else if (flag === '--pm') out.pm = value();
    else if (flag === '--no-install' && inline === undefined) out.install = false;
    else if ((flag === '--help' || flag === '-h') && inline === undefined) out.help = true;
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${flag} (known: --template, --pm, --no-install, --help)`);
    else if (out.dir === undefined) out.dir = arg;
    else throw new UsageError(`one folder only, got "${out.dir}" and "${arg}"`);
  }
  if (out.template !== undefined && !(out.template in TEMPLATES)) {
    throw new UsageError(`unknown template "${out.template}" (known: ${Object.keys(TEMPLATES).join(', ')})`);
  }
  if (out.pm !== undefined && !MANAGERS.includes(out.pm))
    throw new UsageError(`unknown package manager "${out.pm}" (known: ${MANAGERS.join(', ')})`);
  return out;
}

/** The package manager that ran us (`npm create`, `pnpm create`, `yarn create`), else npm. */
function detectManager() {
  const agent = process.env.npm_config_user_agent ?? '';
  return MANAGERS.find((pm) => agent.startsWith(`${pm}/`)) ?? 'npm';
}

/** A folder we may write into: absent, or empty. */
function checkTarget(/** @type {string} */ target) {
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new UsageError(`${relative(process.cwd(), target) || '.'} is not empty: choose a new folder (or empty this one)`);
  }
}

/** An npm package name from the folder's name: lowercase, URL-safe. */
function packageName(/** @type {string} */ target) {
  const name = basename(target)
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'tachyon-app';
}

/**
 * Asks for what the flags did not say (exported for the tests, which answer through streams).
 * @param {{ dir?: string, template?: string, pm?: string, install: boolean }} opts
 * @param {NodeJS.ReadableStream} [input]
 * @param {NodeJS.WritableStream} [output]
 */
export async function ask(opts, input = process.stdin, output = process.stdout) {
  const rl = createInterface({ input, output, terminal: false });
  const say = (/** @type {string} */ line) => output.write(`${line}\n`);
  try {
    while (opts.dir === undefined) {
      const dir = (await rl.question('Project folder (my-app): ')).trim() || 'my-app';
      try {
        checkTarget(resolve(dir));
        opts.dir = dir;
      } catch (e) {
        say(`  ${/** @type {Error} */ (e).message}`);
      }
    }
    const names = Object.keys(TEMPLATES);
    while (opts.template === undefined) {
      say('Template:');
      for (const [i, name] of names.entries()) say(`  ${i + 1}. ${name.padEnd(10)} ${TEMPLATES[/** @type {keyof TEMPLATES} */ (name)]}`);
      const answer = (await rl.question('Which one (1): ')).trim() || '1';
      opts.template = names[Number(answer) - 1] ?? (answer in TEMPLATES ? answer : undefined);
    }
    if (opts.install) {
      const answer = (await rl.question(`Install dependencies with ${opts.pm}? (Y/n): `)).trim().toLowerCase();
      opts.install = answer === '' || answer === 'y' || answer === 'yes';
    }
  } finally {
    rl.close();
  }
}

/** @param {string} template @param {string} target */
function scaffold(template, target) {
  mkdirSync(target, { recursive: true });
  cpSync(join(TEMPLATE_ROOT, '_shared'), target, { recursive: true });
  cpSync(join(TEMPLATE_ROOT, template), target, { recursive: true });
  for (const [from, to] of Object.entries(RENAMES)) {
    if (existsSync(join(target, from))) renameSync(join(target, from), join(target, to));
  }
  const pkgPath = join(target, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  writeFileSync(pkgPath, `${JSON.stringify({ name: packageName(target), ...pkg }, null, 2)}\n`);
}

async function main() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) throw new UsageError(`Tachyon needs Node.js 22 or newer; this is ${process.version}`);
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) {
    console.log(
      `${USAGE}\n\nTemplates:\n${Object.entries(TEMPLATES)
        .map(([n, d]) => `  ${n.padEnd(10)} ${d}`)
        .join('\n')}`,
    );
    return;
  }
  opts.pm ??= detectManager();
  if (opts.dir !== undefined) checkTarget(resolve(opts.dir));
  if (process.stdin.isTTY && process.stdout.isTTY) await ask(opts);
  else if (opts.dir === undefined || opts.template === undefined) {
    throw new UsageError(`not in a terminal: give the folder and --template\n${USAGE}`);
  }
  const dir = /** @type {string} */ (opts.dir);
  const template = /** @type {string} */ (opts.template);
  const target = resolve(dir);
  scaffold(template, target);
  console.log(`\nCreated ${dir} from the ${template} template.`);
  if (opts.install) {
    console.log(`\n$ ${opts.pm} install`);
    const r = spawnSync(opts.pm, ['install'], { cwd: target, stdio: 'inherit', shell: process.platform === 'win32' });
    if (r.status !== 0) {
      console.error(`\n${opts.pm} install failed${r.error ? `: ${r.error.message}` : ''}; the project is written: run it again in ${dir}.`);
      process.exitCode = 1;
      return;
    }
  }
  const run = opts.pm === 'npm' ? 'npm run' : opts.pm;
  const steps = [`cd ${dir}`, ...(opts.install ? [] : [`${opts.pm} install`]), `${run} dev`];
  console.log(
    `\nNext:\n${steps.map((s) => `  ${s}`).join('\n')}\n\nThen: ${run} test, ${run} typecheck, ${opts.pm === 'npm' ? 'npm start' : `${opts.pm} start`} (production). See README.md.`,
  );
}

// Run as a command (npm's bin link is a symlink: compare real paths), not when imported by a test.
if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  main().catch((e) => {
    console.error(`create-tachyon: ${e instanceof UsageError ? e.message : /** @type {Error} */ (e).stack}`);
    process.exit(1);
  });
}
