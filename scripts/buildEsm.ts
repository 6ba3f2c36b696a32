/**
 * Builds the ES-module copy of the library beside the CommonJS one: `src/**.ts` -> `dist/esm/**.js`.
 *
 *     npm run build        # tsc (CommonJS, types, type check), then this script
 *
 * `tsc -p tsconfig.build.json` has already type-checked the sources and written the CommonJS
 * build and the `.d.ts` files, which both builds share. This script only transpiles each file
 * on its own (tsconfig.build.json sets `isolatedModules`, so that is safe) to ES2022 modules and
 * rewrites relative specifiers to the full file names ESM requires (`./errors` ->
 * `./errors.js`, `./kernels` -> `./kernels/index.js`). `dist/esm/package.json` marks the folder
 * as ESM and repeats the package's `sideEffects`, since bundlers read the nearest package.json.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

export interface BuildConfig {
  /** Folder of the TypeScript sources. */
  src: string;
  /** Folder the ES modules are written to. */
  out: string;
  /** Modules with import-time effects, relative to `src/` as `.js` globs (from package.json). */
  sideEffects: string[];
}

const ROOT = path.resolve(__dirname, '..');

function readConfig(): BuildConfig {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { sideEffects?: string[] };
  const prefix = './dist/esm/';
  return {
    src: path.join(ROOT, 'src'),
    out: path.join(ROOT, 'dist', 'esm'),
    sideEffects: (pkg.sideEffects ?? []).filter((p) => p.startsWith(prefix)).map((p) => `./${p.slice(prefix.length)}`),
  };
}

/** `./x` -> `./x.js` or `./x/index.js`, whichever source file exists next to `fromFile`. */
function fullSpecifier(fromFile: string, specifier: string): string {
  if (!specifier.startsWith('.') || /\.(m?js|json)$/.test(specifier)) return specifier;
  const base = path.resolve(path.dirname(fromFile), specifier);
  if (fs.existsSync(`${base}.ts`)) return `${specifier}.js`;
  if (fs.existsSync(path.join(base, 'index.ts'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`${path.relative(ROOT, fromFile)}: cannot resolve '${specifier}' to a source file`);
}

/** A transformer that rewrites the specifiers of imports, re-exports and `import()` calls. */
function rewriteSpecifiers(fromFile: string): ts.TransformerFactory<ts.SourceFile> {
  return (context) => (sourceFile) => {
    const f = context.factory;
    const literal = (node: ts.Expression | undefined) =>
      node && ts.isStringLiteral(node) ? f.createStringLiteral(fullSpecifier(fromFile, node.text)) : node;
    const visit = (node: ts.Node): ts.Node => {
      if (ts.isImportDeclaration(node)) {
        return f.updateImportDeclaration(node, node.modifiers, node.importClause, literal(node.moduleSpecifier)!, node.attributes);
      }
      if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
        return f.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, literal(node.moduleSpecifier), node.attributes);
      }
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments.length === 1) {
        return f.updateCallExpression(node, node.expression, node.typeArguments, [literal(node.arguments[0])!]);
      }
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitNode(sourceFile, visit) as ts.SourceFile;
  };
}

function sourcesUnder(folder: string): string[] {
  return fs
    .readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

export function buildEsm(config: BuildConfig = readConfig()): string[] {
  fs.rmSync(config.out, { recursive: true, force: true });
  const written: string[] = [];
  for (const file of sourcesUnder(config.src)) {
    const outFile = path.join(config.out, path.relative(config.src, file)).replace(/\.ts$/, '.js');
    const result = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ES2022,
        isolatedModules: true,
        esModuleInterop: true,
        sourceMap: true,
        sourceRoot: '',
      },
      transformers: { after: [rewriteSpecifiers(file)] },
    });
    fs.mkdirSync(path.dirname(outFile), { recursive: true });
    const map = JSON.parse(result.sourceMapText ?? '{}') as { sources?: string[]; file?: string };
    map.file = path.basename(outFile);
    map.sources = [path.relative(path.dirname(outFile), file).split(path.sep).join('/')];
    fs.writeFileSync(outFile, result.outputText.replace(/\/\/# sourceMappingURL=.*$/m, `//# sourceMappingURL=${path.basename(outFile)}.map`));
    fs.writeFileSync(`${outFile}.map`, JSON.stringify(map));
    written.push(outFile);
  }
  const pkg = { type: 'module', sideEffects: config.sideEffects };
  fs.writeFileSync(path.join(config.out, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  return written;
}

if (require.main === module) {
  const written = buildEsm();
  console.log(`ESM build: ${written.length} modules in ${path.relative(ROOT, readConfig().out)}/`);
}
