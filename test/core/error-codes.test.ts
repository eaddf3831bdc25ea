import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  ConflictError,
  hasCode,
  NotFoundError,
  PmagentError,
  RefusedError,
  UsageError,
  type CodeOf,
  type ErrorCode,
} from "../../src/core/index.js";

const SRC = join(import.meta.dirname, "../../src");

describe("typed error codes", () => {
  it("compiles only a declared code, and only of the class's kind (checked by tsc in npm run lint)", () => {
    // @ts-expect-error an undeclared code does not compile
    const undeclared = new UsageError("no_such_code", "x");
    // @ts-expect-error run_fenced is declared "refused": a UsageError cannot carry it
    const otherKind = new UsageError("run_fenced", "x");
    // A code declared with two kinds ("usage" | "not_found") is one of each.
    const both: Array<CodeOf<"usage"> & CodeOf<"not_found">> = ["branch_not_found"];
    const code: ErrorCode = "claim_lost";
    expect([undeclared.code, otherKind.code, both[0], code]).toEqual([
      "no_such_code",
      "run_fenced",
      "branch_not_found",
      "claim_lost",
    ]);
  });

  it("hasCode matches a PmagentError by any of its codes, and nothing else", () => {
    const lost = new RefusedError("claim_lost", "lost");
    expect(hasCode(lost, "claim_lost")).toBe(true);
    expect(hasCode(lost, "run_not_waiting", "claim_lost")).toBe(true);
    expect(hasCode(lost, "run_not_waiting")).toBe(false);
    expect(hasCode(lost)).toBe(false);
    expect(hasCode(new NotFoundError("run_not_found", "gone"), "run_not_found")).toBe(true);
    expect(hasCode(new ConflictError("forge_moved", "moved"), "forge_moved")).toBe(true);
    expect(hasCode(new PmagentError("agent_failed", "failed"), "agent_failed")).toBe(true);
    // Only a PmagentError: not another error or object that has the same code.
    expect(hasCode(Object.assign(new Error("lost"), { code: "claim_lost" }), "claim_lost")).toBe(false);
    expect(hasCode({ code: "claim_lost" }, "claim_lost")).toBe(false);
    expect(hasCode(undefined, "claim_lost")).toBe(false);
    // The guard narrows to the code it matched.
    const err: unknown = new RefusedError("run_fenced", "fenced");
    if (hasCode(err, "run_fenced", "claim_lost")) {
      const narrowed: "run_fenced" | "claim_lost" = err.code;
      expect(narrowed).toBe("run_fenced");
    } else expect.unreachable();
  });

  it("declares every code src/ raises, once, with the kinds it is raised with, and no code nobody raises", () => {
    const { declared, used, twice } = scanSource();
    expect(twice, "codes declared more than once (declare a code once, in the lowest module)").toEqual([]);
    const undeclared = [...used.keys()].filter((c) => !declared.has(c)).sort();
    expect(undeclared, "codes raised but declared in no error-codes.ts").toEqual([]);
    const unused = [...declared.keys()].filter((c) => !used.has(c)).sort();
    expect(unused, "codes declared but raised nowhere in src/").toEqual([]);
    const wrongKind = [...declared]
      .filter(([c, kinds]) => used.has(c) && [...kinds].sort().join("|") !== [...used.get(c)!].sort().join("|"))
      .map(([c, kinds]) => `${c}: declared ${[...kinds].join("|")}, raised as ${[...used.get(c)!].join("|")}`);
    expect(wrongKind, "codes whose declared kind is not the kinds they are raised with").toEqual([]);
    expect(used.size).toBeGreaterThan(200);
  });
});

/** What one error class does with its constructor's arguments, read from its declaration. */
interface ErrorClass {
  base: string;
  /** The kind its super call passes (`kind: "usage"`, or `kind: options.kind ?? "refused"`), if any. */
  kind?: string;
  /** Whether a caller's options choose the kind (`kind: options.kind ...`). */
  kindFromOptions: boolean;
  /** Whether its constructor takes the code first (else it passes its own code to super). */
  takesCode: boolean;
}

/**
 * Reads src/ without the type checker: the codes each error-codes.ts declares, and the codes passed
 * to the constructors of PmagentError and its subclasses (`new X("code", ...)`, a subclass's own
 * `super("code", ...)`, a `code` parameter's default, parseWith/parseJsonText's code argument).
 */
function scanSource(): {
  declared: Map<string, Set<string>>;
  used: Map<string, Set<string>>;
  twice: string[];
} {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => ts.createSourceFile(f, readFileSync(join(SRC, f), "utf8"), ts.ScriptTarget.Latest, true));
  const declared = new Map<string, Set<string>>();
  const twice: string[] = [];
  const used = new Map<string, Set<string>>();
  const use = (code: string, kind: string) => {
    if (!used.has(code)) used.set(code, new Set());
    used.get(code)!.add(kind);
  };
  const kindsOfType = (type: ts.TypeNode): string[] =>
    ts.isUnionTypeNode(type)
      ? type.types.flatMap(kindsOfType)
      : ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)
        ? [type.literal.text]
        : [];

  // The registry: each `interface ErrorCodes { code: "kind"; }` in an error-codes.ts.
  for (const sf of files.filter((f) => f.fileName.endsWith("error-codes.ts"))) {
    const visit = (node: ts.Node) => {
      if (ts.isInterfaceDeclaration(node) && node.name.text === "ErrorCodes") {
        for (const m of node.members) {
          if (!ts.isPropertySignature(m) || !m.type) continue;
          const code = m.name.getText(sf);
          if (declared.has(code)) twice.push(`${code} (${sf.fileName})`);
          declared.set(code, new Set(kindsOfType(m.type)));
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  // The error classes: PmagentError and every class that extends one of them.
  const classes = new Map<string, ErrorClass>([
    ["PmagentError", { base: "", kind: "internal", kindFromOptions: true, takesCode: true }],
  ]);
  const kindIn = (options: ts.Expression | undefined): { kind?: string; fromOptions: boolean } => {
    if (!options || !ts.isObjectLiteralExpression(options)) return { fromOptions: false };
    const prop = options.properties.find((p) => p.name?.getText() === "kind");
    if (!prop || !ts.isPropertyAssignment(prop)) return { fromOptions: false };
    const init = prop.initializer;
    if (ts.isStringLiteral(init)) return { kind: init.text, fromOptions: false };
    if (ts.isBinaryExpression(init) && ts.isStringLiteral(init.right))
      return { kind: init.right.text, fromOptions: true };
    return { fromOptions: false };
  };
  const classDecls: Array<{ sf: ts.SourceFile; node: ts.ClassDeclaration; base: string }> = [];
  for (const sf of files) {
    const visit = (node: ts.Node) => {
      if (ts.isClassDeclaration(node) && node.name) {
        const ext = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
        if (ext) classDecls.push({ sf, node, base: ext.expression.getText(sf) });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const { node, base } of classDecls) {
      const name = node.name!.text;
      if (classes.has(name) || !classes.has(base)) continue;
      const ctor = node.members.find(ts.isConstructorDeclaration);
      let superCall: ts.CallExpression | undefined;
      ctor?.body?.forEachChild(function find(n) {
        if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.SuperKeyword) superCall = n;
        else n.forEachChild(find);
      });
      const own = kindIn(superCall?.arguments[2]);
      classes.set(name, {
        base,
        kind: own.kind ?? classes.get(base)!.kind,
        kindFromOptions: own.fromOptions,
        takesCode: ctor ? ctor.parameters[0]?.name.getText() === "code" : classes.get(base)!.takesCode,
      });
      grew = true;
    }
  }

  for (const sf of files.filter((f) => !f.fileName.endsWith("error-codes.ts"))) {
    // File-level `const NAME = "code"`, for a code passed by its constant's name.
    const consts = new Map<string, string>();
    for (const st of sf.statements)
      if (ts.isVariableStatement(st))
        for (const d of st.declarationList.declarations)
          if (ts.isIdentifier(d.name) && d.initializer && ts.isStringLiteral(d.initializer))
            consts.set(d.name.text, d.initializer.text);
    const codesIn = (arg: ts.Expression | undefined): string[] => {
      if (!arg) return [];
      if (ts.isParenthesizedExpression(arg)) return codesIn(arg.expression);
      if (ts.isConditionalExpression(arg)) return [...codesIn(arg.whenTrue), ...codesIn(arg.whenFalse)];
      if (ts.isIdentifier(arg)) return consts.has(arg.text) ? [consts.get(arg.text)!] : [];
      return ts.isStringLiteralLike(arg) ? [arg.text] : [];
    };
    const visit = (node: ts.Node) => {
      let cls: ErrorClass | undefined;
      let args: readonly ts.Expression[] = [];
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        cls = classes.get(node.expression.text);
        if (cls && !cls.takesCode) cls = undefined;
        args = node.arguments ?? [];
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) {
        const klass = ts.findAncestor(node, ts.isClassDeclaration);
        const ext = klass?.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
        cls = ext ? classes.get(ext.expression.getText(sf)) : undefined;
        args = node.arguments;
      } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
        const at = { parseWith: 3, parseJsonText: 2 }[node.expression.text];
        if (at !== undefined) for (const c of codesIn(node.arguments[at])) use(c, "usage");
      } else if (ts.isParameter(node) && node.name.getText(sf) === "code" && node.initializer && node.type) {
        const kinds = node.type.getText(sf).match(/^CodeOf<"(\w+)">$/);
        if (kinds) for (const c of codesIn(node.initializer)) use(c, kinds[1]!);
      }
      if (cls) {
        const chosen = cls.kindFromOptions ? kindIn(args[2]).kind : undefined;
        for (const c of codesIn(args[0])) use(c, chosen ?? cls.kind ?? "internal");
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { declared, used, twice };
}
