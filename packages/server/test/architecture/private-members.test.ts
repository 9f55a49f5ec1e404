// The engineering rule "no module touches another's private (`_`) members", checked with the
// TypeScript compiler: packages/server/src is type-checked, and every `x._name` (also
// `x['_name']` and `const { _name } = x`) in it is resolved to the member it reads.
//
// 1. A `_` member of Request, Response or ResponseCore, read outside src/http/io/: always an
//    offence. The lifecycle modules of src/http/ (compile-route, chain, validate-step,
//    send-value, route-context, tracker, the access log) go through the functions of
//    src/http/io/exchange.ts; the built-ins (plugins/), static files and mounts use the same
//    public API a third-party plugin has.
// 2. A `_` member declared in another file (any class, any folder), read anywhere: an offence,
//    except the entries of PENDING below, each owned by the piece of work that removes it.
//    `this._x` on the file's own class, and reads of a class declared in the same folder (a
//    folder is one concern: the route table reads the Router it flattens; request.ts and
//    response.ts read each other) are fine.
// The fixture is checked where it stands and, as a copy, at src/http/ and src/http/io/.
import assert from 'node:assert/strict';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..', '..');
const src = join(pkg, 'src');
const fixture = join(here, 'fixtures', 'offender.ts');

/** The request/response classes whose `_` members are never read outside src/http/io/. */
const GUARDED = new Set(['http/io/request.ts#Request', 'http/io/response.ts#Response', 'http/io/response-core.ts#ResponseCore']);

/**
 * Known cross-module `_` reads that other work removes: `file → members` (none today).
 * Leaving an entry here after its use is gone does not fail (those branches land separately).
 */
const PENDING: Record<string, { owner: string; members: string[] }> = {};

interface Offence {
  file: string;
  line: number;
  member: string;
  /** `Class` (file) the member belongs to, or '?' when the type does not resolve. */
  owner: string;
  guarded: boolean;
}

const rel = (file: string) => relative(src, file).split(sep).join('/');

/** The program of src/ and `extra`, plus `virtual` files (path → text) that exist only in memory. */
function loadProgram(extra: string[], virtual: Map<string, string>): ts.Program {
  const configPath = join(pkg, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, pkg);
  const options = { ...parsed.options, noEmit: true, composite: false, declaration: false, rootDir: undefined };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, ...rest) => {
    const text = virtual.get(f);
    return text !== undefined ? ts.createSourceFile(f, text, lang) : getSourceFile.call(host, f, lang, ...rest);
  };
  return ts.createProgram({ rootNames: [...parsed.fileNames, ...extra, ...virtual.keys()], options, host });
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
      if (name?.startsWith('_') && !name.startsWith('__') && target !== undefined) {
        const line = sf.getLineAndCharacterOfPosition(at.getStart(sf)).line + 1;
        const type = checker.getTypeAtLocation(target);
        const guarded = isGuarded(checker, type);
        const member = ts.isBindingElement(node) ? checker.getPropertyOfType(type, name) : checker.getSymbolAtLocation(at);
        const decl = member?.declarations?.[0];
        const declFile = decl?.getSourceFile().fileName;
        const parent = decl?.parent;
        const ownerName =
          parent !== undefined && (ts.isClassLike(parent) || ts.isInterfaceDeclaration(parent)) && parent.name !== undefined
            ? parent.name.text
            : '?';
        const owner = declFile === undefined ? '?' : `${ownerName} (${rel(declFile)})`;
        // `this._x`: the class's own member or one it inherits (protected use). Unresolved
        // (`any`) reads are offences: a cast must not hide one.
        const self = !ts.isObjectBindingPattern(target) && target.kind === ts.SyntaxKind.ThisKeyword;
        if (guarded || declFile === undefined || (!self && declFile !== sf.fileName && dirname(declFile) !== dirname(sf.fileName)))
          out.push({ file: rel(sf.fileName), line, member: name, owner, guarded });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

const format = (o: Offence) => `  src/${o.file}:${o.line}  ${o.member}  of ${o.owner}`;
const pending = (o: Offence) => PENDING[o.file]?.members.includes(o.member) === true;

/** Rule 1: a guarded read outside src/http/io/. */
const ruleOne = (o: Offence) => o.guarded && !o.file.startsWith('http/io/');
/** Rule 2: another module's member (rule 1's reads aside), unless PENDING. */
const ruleTwo = (o: Offence) => !o.guarded && !pending(o);

// The fixture, copied into src/http/ (a lifecycle module's place) and src/http/io/, its
// imports rewritten for where the copy stands.
const fixtureText = ts.sys.readFile(fixture)!;
const placed = (dir: string, up: string) =>
  [join(src, dir, '__architecture-fixture__.ts'), fixtureText.replaceAll("'../../../src/", `'${up}`)] as const;
const inHttp = placed('http', '../');
const inIo = placed(join('http', 'io'), '../../');
const virtual = new Map([inHttp, inIo]);

const program = loadProgram([fixture], virtual);
const offences = scan(program, (sf) => sf.fileName.startsWith(src + sep) && !virtual.has(sf.fileName));
const fixtureOffences = (file: string) =>
  scan(program, (sf) => sf.fileName === file).map((o) => `${o.line} ${o.member} ${o.guarded ? 'guarded' : o.owner}`);

test('the check catches the known shapes (fixture: a request read, a response write, a cast, a destructuring, another class)', () => {
  assert.deepEqual(fixtureOffences(fixture), [
    '11 _headers guarded',
    '12 _push guarded',
    '13 _state guarded',
    '14 _x ?',
    '15 _res guarded',
    '16 _ws Socket (realtime/socket.ts)',
  ]);
});

test('in src/http/ outside io/, both rules apply: request/response members and other classes are offences', () => {
  const found = scan(program, (sf) => sf.fileName === inHttp[0]);
  assert.deepEqual(
    found.filter(ruleOne).map((o) => `${o.line} ${o.member}`),
    ['11 _headers', '12 _push', '13 _state', '15 _res'],
  );
  assert.deepEqual(
    found.filter(ruleTwo).map((o) => `${o.line} ${o.member} ${o.owner}`),
    ['14 _x ?', '16 _ws Socket (realtime/socket.ts)'],
  );
});

test('in src/http/io/, request/response members are allowed, other classes still are not', () => {
  const found = scan(program, (sf) => sf.fileName === inIo[0]);
  assert.deepEqual(found.filter(ruleOne), []);
  assert.deepEqual(
    found.filter(ruleTwo).map((o) => `${o.line} ${o.member} ${o.owner}`),
    ['14 _x ?', '16 _ws Socket (realtime/socket.ts)'],
  );
});

test('no module outside src/http/io/ reads a `_` member of Request, Response or ResponseCore', () => {
  const bad = offences.filter(ruleOne);
  assert.equal(
    bad.length,
    0,
    `private request/response members read outside src/http/io/ (make what is needed public API, or a function of src/http/io/exchange.ts):\n${bad.map(format).join('\n')}`,
  );
});

test("no module reads another module's `_` members (PENDING aside)", () => {
  const bad = offences.filter(ruleTwo);
  assert.equal(bad.length, 0, `\`_\` members of another module read:\n${bad.map(format).join('\n')}`);
});
