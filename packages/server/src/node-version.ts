// The first module index.ts imports, with no imports of its own: ES modules evaluate their
// dependencies depth-first in source order, so this check runs before any other module of the
// package does. On Node < 22 the first failure would otherwise come from deep inside (the
// uWebSockets.js addon built for another ABI, an API Node 20 lacks) as a stack trace that
// does not say what is wrong. It exits rather than throws: a thrown error prints its stack,
// and there is nothing a caller could do with it on a runtime the package cannot run on.
const MIN_MAJOR = 22;

const major = Number(process.versions.node.split('.')[0]);
if (major < MIN_MAJOR) {
  process.stderr.write(
    `@tachyon/server needs Node.js ${MIN_MAJOR} or newer; this is Node.js ${process.version} (${process.execPath}). Install Node.js ${MIN_MAJOR}+ (e.g. nvm install 24) and run again.\n`,
  );
  process.exit(1);
}

export {};
