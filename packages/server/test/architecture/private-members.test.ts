// The engineering rule "no module touches another's private (`_`) members", checked with the
// TypeScript compiler: packages/server/src is type-checked, and every `x._name` (also
// `x['_name']` and `const { _name } = x`) in a file outside src/http/ is resolved to the
// member it reads.
//
// 1. A `_` member of Request, Response or ResponseCore, read outside src/http/: always an
//    offence. The built-ins (plugins/), the WebSocket upgrade, static files and mounts use the
//    same public API a third-party plugin has.
// 2. A `_` member declared in another file (any class, any folder), read outside src/http/:
//    an offence, except the entries of PENDING below, each owned by the piece of work that
//    removes it. `this._x` on the file's own class and module-level helpers that read the
//    privates of a class declared in the same file are fine.
// src/http/ itself is not checked yet: its lifecycle modules (compile-route, chain,
// route-context, validate-step, access log) still drive the request and the response through
// their `_` members; tightening the rule to "outside src/http/io/" waits for that lifecycle work.
import assert from 'node:assert/strict';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..', '..');
const src = join(pkg, 'src');
const fixture = join(here, 'fixtures', 'offender.ts');

/** The request/response classes whose `_` members are never read outside src/http/. */
const GUARDED = new Set(['http/io/request.ts#Request', 'http/io/response.ts#Response', 'http/io/response-core.ts#ResponseCore']);

/**
 * Known cross-module `_` reads outside src/http/ that other work removes: `file → members`.
 * Leaving an entry here after its use is gone does not fail (those branches land separately).
 */
const PENDING: Record<string, { owner: string; members: string[] }> = {
  'cluster/worker.ts': { owner: 'layering (app/ ↔ cluster/)', members: ['_abort', '_tls', '_startForAcceptor', '_listenShared'] },
  'cluster/index.ts': { owner: 'layering (app/ ↔ cluster/)', members: ['_tls'] },
  // The route table reads the Router it flattens; not part of the request/response surface.
  'app/compile.ts': { owner: 'router/plugin machinery (hooks)', members: ['_middleware', '_errorHandler'] },
  'routing/route-table.ts': { owner: 'router/plugin machinery (hooks)', members: ['_middleware', '_errorHandler', '_routes', '_children'] },
};

interface Offence {
  file: string;
  line: number;
  member: string;
  /** `Class` (file) the member belongs to, or '?' when the type does not resolve. */
  owner: string;
  guarded: boolean;
}

const rel = (file: string) => relative(src, file).split(sep).join('/');

function loadProgram(extra: string[]): ts.Program {
  const configPath = join(pkg, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, pkg);
  return ts.createProgram({ rootNames: [...parsed.fileNames, ...extra], options: { ...parsed.options, noEmit: true, composite: false, declaration: false, rootDir: undefined } });
}

/** `http/io/request.ts#Request` for a class or interface symbol, or null. */
function classKey(symbol: ts.Symbol | undefined): string | null {
  const decl = symbol?.declarations?.[0];
  if (decl === undefined) return null;
  return `${rel(decl.getSourceFile().fileName)}#${symbol!.name}`;
}

/** True when `type` (or one of its base classes) is Request, Response or ResponseCore. */
function isGuarded(checker: ts.TypeChecker, type: ts.Type): boolean {
  const t = checker.getNonNullableType(type);
  if (t.isUnion()) return t.types.some((u) => isGuarded(checker, u));
  const key = classKey(t.getSymbol() ?? t.aliasSymbol);
  if (key !== null && GUARDED.has(key)) return true;
  const target = (t as ts.TypeReference).target ?? t;
  if (target.isClassOrInterface()) return (checker.getBaseTypes(target) ?? []).some((b) => isGuarded(checker, b));
  return false;
}

export function scan(program: ts.Program, files: (f: ts.SourceFile) => boolean): Offence[] {
  const checker = program.getTypeChecker();
  const out: Offence[] = [];
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || !files(sf)) continue;
    const visit = (node: ts.Node): void => {
      let name: string | undefined;
      let target: ts.Expression | ts.BindingPattern | undefined;
      let at: ts.Node = node;
      if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) {
        name = node.name.text;
        target = node.expression;
        at = node.name;
      } else if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) {
        name = node.argumentExpression.text;
        target = node.expression;
        at = node.argumentExpression;
      } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const prop = node.propertyName ?? node.name;
        if (ts.isIdentifier(prop) || ts.isStringLiteralLike(prop)) name = prop.text;
        target = node.parent;
        at = prop;
      }
      if (name !== undefined && name.startsWith('_') && !name.startsWith('__') && target !== undefined) {
        const line = sf.getLineAndCharacterOfPosition(at.getStart(sf)).line + 1;
        const type = checker.getTypeAtLocation(target);
        const guarded = isGuarded(checker, type);
        const member = ts.isBindingElement(node) ? checker.getPropertyOfType(type, name) : checker.getSymbolAtLocation(at);
        const decl = member?.declarations?.[0];
        const declFile = decl?.getSourceFile().fileName;
        const parent = decl?.parent;
        const ownerName = parent !== undefined && (ts.isClassLike(parent) || ts.isInterfaceDeclaration(parent)) && parent.name !== undefined ? parent.name.text : '?';
        const owner = declFile === undefined ? '?' : `${ownerName} (${rel(declFile)})`;
        // `this._x`: the class's own member or one it inherits (protected use). Unresolved
        // (`any`) reads are offences: a cast must not hide one.
        const self = !ts.isBindingPattern(target) && target.kind === ts.SyntaxKind.ThisKeyword;
        if (guarded || declFile === undefined || (!self && declFile !== sf.fileName)) out.push({ file: rel(sf.fileName), line, member: name, owner, guarded });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

const format = (o: Offence) => `  src/${o.file}:${o.line}  ${o.member}  of ${o.owner}`;
const pending = (o: Offence) => PENDING[o.file]?.members.includes(o.member) === true;

const program = loadProgram([fixture]);
const outsideHttp = (sf: ts.SourceFile) => sf.fileName.startsWith(src + sep) && !sf.fileName.startsWith(join(src, 'http') + sep);
const offences = scan(program, outsideHttp);

test('the check catches the known shapes (fixture: a request read, a response write, a cast, a destructuring, another class)', () => {
  const found = scan(program, (sf) => sf.fileName === fixture).map((o) => `${o.line} ${o.member} ${o.guarded ? 'guarded' : o.owner}`);
  assert.deepEqual(found, [
    '11 _headers guarded',
    '12 _push guarded',
    '13 _state guarded',
    '14 _x ?',
    '15 _res guarded',
    '16 _ws Socket (realtime/socket.ts)',
  ]);
});

test('no module outside src/http/ reads a `_` member of Request, Response or ResponseCore', () => {
  const bad = offences.filter((o) => o.guarded);
  assert.equal(bad.length, 0, `private request/response members read outside src/http/ (make what is needed public API):\n${bad.map(format).join('\n')}`);
});

test("no module outside src/http/ reads another module's `_` members (PENDING aside)", () => {
  const bad = offences.filter((o) => !o.guarded && !pending(o));
  assert.equal(bad.length, 0, `\`_\` members of another module read outside src/http/:\n${bad.map(format).join('\n')}`);
});
