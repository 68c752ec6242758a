/**
 * No function in src/ is longer than MAX_LINES lines (its first line to its last, nested functions counted in it),
 * so a reader meets a long procedure as named steps. src/ui and src/pipeline/app (the screens and their operations)
 * are outside this rule. A function left long on purpose is listed in EXCEPTIONS with the reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const MAX_LINES = 100;
const EXCLUDED_DIRS = ['src/ui', 'src/pipeline/app'];

/** `file:name` → why it stays longer than MAX_LINES. */
const EXCEPTIONS: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  if (EXCLUDED_DIRS.includes(dir)) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface FunctionSpan {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** The name a reader would look for: the function's own, or the variable, property or method it is assigned to. */
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.initializer === node) {
    return parent.name.getText(source);
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

function functionsOf(file: string): FunctionSpan[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      spans.push({ file, line: first + 1, name: nameOf(node, source), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

describe('function length', () => {
  const spans = sourceFiles('src').flatMap(functionsOf);

  it(`no function in src/ (but src/ui and src/pipeline/app) is longer than ${MAX_LINES} lines`, () => {
    // The walk reaches functions of every kind: declarations, methods, arrow functions.
    expect(spans.map((f) => f.name)).toEqual(expect.arrayContaining(['runEpisode', 'attempt', 'evaluate']));
    const offenders = spans
      .filter((f) => f.lines > MAX_LINES && !(`${f.file}:${f.name}` in EXCEPTIONS))
      .sort((a, b) => b.lines - a.lines)
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(offenders).toEqual([]);
  });

  it('every exception still names a long function', () => {
    const long = new Set(spans.filter((f) => f.lines > MAX_LINES).map((f) => `${f.file}:${f.name}`));
    expect(Object.keys(EXCEPTIONS).filter((key) => !long.has(key))).toEqual([]);
  });
});
