/**
 * The safe expression language of utilities.md "Expressions" (schema.compute, generate.filter,
 * structure.restructure, find-replace templates). Source text is parsed by `jsep` into a tree, the tree
 * is checked once (length, nesting, node kinds, operators, function names, forbidden names) and turned
 * into closures; evaluating those closures only ever reads own members of JSON data and calls the
 * whitelisted functions of expression-functions.ts. Nothing is ever handed to eval, Function or vm,
 * and no value produced here is ever a function or a host object, so no expression can reach a
 * prototype or a global.
 *
 * Errors: every refusal of the source is a UtilityConfigError (400 before anything runs) naming the
 * config field. Evaluation never throws for data reasons: a missing field, a wrong type or a result
 * that is not JSON (NaN, Infinity) gives null.
 *
 * Work bound: see expression-values.ts, home of the per-evaluation allowance and of the values and
 * coercions the evaluator and the functions share.
 */
import jsep from "jsep";
import type { WorkBudget } from "../budget";
import { UtilityConfigError } from "../types";
import { FUNCTIONS, METHODS, NAMESPACES } from "./expression-functions";
import { MAX_EXPRESSION_DEPTH, prepareSource, splitTemplate } from "./expression-source";
import {
  arithmetic,
  compareValues,
  counted,
  FORBIDDEN_NAMES,
  joined,
  jsonValue,
  looseEqual,
  member,
  textOf,
  toNumber,
  truthy,
} from "./expression-values";
import { deepEqual } from "./paths";

export { MAX_EXPRESSION_DEPTH } from "./expression-source";
export {
  type Comparison,
  compareValues,
  ExpressionTooLargeError,
  looseEqual,
  MAX_RESULT_STRING_LENGTH,
  toText,
  truthy,
} from "./expression-values";

export const MAX_EXPRESSION_LENGTH = 1_000;

/**
 * What an expression sees: `record` (the identifiers and `$`), `root` (`$root`, the whole primary) and
 * any further member as a variable of that name (e.g. `old`, the matched text of find-replace).
 */
export interface ExpressionScope {
  record: unknown;
  root?: unknown;
  [variable: string]: unknown;
}

export interface CompiledExpression {
  readonly source: string;
  /** `work`: the run's budget, checked as the evaluation goes */
  evaluate(scope: ExpressionScope, work?: WorkBudget): unknown;
}

type Evaluator = (scope: ExpressionScope) => unknown;
type Node = jsep.Expression;

/**
 * Names of host objects. Identifiers only ever read the record, so these could not reach anything
 * anyway; they are refused so that an attempt fails loudly instead of quietly giving null.
 */
const HOST_NAMES = new Set([
  "this",
  "globalThis",
  "global",
  "window",
  "self",
  "process",
  "Bun",
  "Deno",
  "require",
  "module",
  "exports",
  "Function",
  "eval",
  "import",
  "Reflect",
  "Proxy",
  "Object",
  "Symbol",
]);
const BINARY_OPERATORS = new Set(["+", "-", "*", "/", "%", "==", "!=", "===", "!==", "<", "<=", ">", ">=", "&&", "||", "??"]);
const UNARY_OPERATORS = new Set(["!", "-", "+"]);

// ---------------------------------------------------------------------------------------------
// Tree → closures

class Compiler {
  constructor(
    private readonly fail: (message: string) => never,
    private readonly now: number,
  ) {}

  /**
   * `depth` counts nesting. Chains stay at their parent's level (the left operand of a binary operator,
   * the object of a member access or method call), so `a && b && c …` and `a.b.c.d …` are flat.
   */
  compile(node: Node, depth: number): Evaluator {
    if (depth > MAX_EXPRESSION_DEPTH) this.fail(`the expression is nested deeper than ${MAX_EXPRESSION_DEPTH} levels`);
    switch (node.type) {
      case "Literal":
        return this.literal(node as jsep.Literal);
      case "Identifier":
        return this.identifier((node as jsep.Identifier).name);
      case "MemberExpression":
        return this.member(node as jsep.MemberExpression, depth);
      case "CallExpression":
        return this.call(node as jsep.CallExpression, depth);
      case "UnaryExpression":
        return this.unary(node as jsep.UnaryExpression, depth);
      case "BinaryExpression":
        return this.binary(node as jsep.BinaryExpression, depth);
      case "ConditionalExpression": {
        const { test, consequent, alternate } = node as jsep.ConditionalExpression;
        const [ifTest, ifTrue, ifFalse] = [test, consequent, alternate].map((part) => this.compile(part, depth + 1));
        return (scope) => (truthy(ifTest(scope)) ? ifTrue(scope) : ifFalse(scope));
      }
      case "ArrayExpression": {
        const elements = (node as jsep.ArrayExpression).elements.map((element) => {
          if (element === null) this.fail("an array literal has an empty slot");
          return this.compile(element, depth + 1);
        });
        return (scope) => elements.map((element) => element(scope));
      }
      case "ThisExpression":
        return this.fail("'this' is not available in expressions");
      case "Compound":
        return this.fail("expected one expression (found several, or none)");
      default:
        return this.fail(`${node.type} is not supported in expressions`);
    }
  }

  private literal(node: jsep.Literal): Evaluator {
    const value = node.value;
    if (value !== null && !["string", "number", "boolean"].includes(typeof value)) this.fail(`unsupported literal ${node.raw}`);
    const constant = jsonValue(value);
    return () => constant;
  }

  private checkName(name: string): void {
    if (FORBIDDEN_NAMES.has(name)) this.fail(`'${name}' is not allowed in expressions`);
  }

  private identifier(name: string): Evaluator {
    this.checkName(name);
    if (HOST_NAMES.has(name)) this.fail(`'${name}' is not available in expressions (a field of that name is read as $["${name}"])`);
    if (name === "$") return (scope) => jsonValue(scope.record);
    if (name === "$root") return (scope) => jsonValue(scope.root);
    return (scope) =>
      name !== "record" && name !== "root" && Object.hasOwn(scope, name) ? jsonValue(scope[name]) : member(scope.record, name);
  }

  private propertyKey(node: jsep.MemberExpression, depth: number): Evaluator {
    if (!node.computed) {
      const name = (node.property as jsep.Identifier).name;
      this.checkName(name);
      return () => name;
    }
    if (node.property.type === "Literal") this.checkName(String((node.property as jsep.Literal).value));
    return this.compile(node.property, depth + 1);
  }

  private member(node: jsep.MemberExpression, depth: number): Evaluator {
    const object = this.compile(node.object, depth);
    const key = this.propertyKey(node, depth);
    return (scope) => member(object(scope), key(scope));
  }

  private call(node: jsep.CallExpression, depth: number): Evaluator {
    const args = node.arguments.map((argument) => this.compile(argument, depth + 1));
    const evaluateArgs = (scope: ExpressionScope) => args.map((argument) => argument(scope));
    const callee = node.callee;
    if (callee.type === "Identifier") {
      const name = (callee as jsep.Identifier).name;
      this.checkName(name);
      const fn = FUNCTIONS[name];
      if (!fn) this.fail(`unknown function '${name}'`);
      return (scope) => jsonValue(fn(...evaluateArgs(scope)));
    }
    if (callee.type === "MemberExpression" && !(callee as jsep.MemberExpression).computed) {
      const { object, property } = callee as jsep.MemberExpression;
      const name = (property as jsep.Identifier).name;
      this.checkName(name);
      if (object.type === "Identifier" && (object as jsep.Identifier).name in NAMESPACES) {
        const namespace = (object as jsep.Identifier).name;
        if (namespace === "Date" && name === "now") {
          const now = this.now;
          return () => now;
        }
        const fn = NAMESPACES[namespace][name];
        if (!fn) this.fail(`unknown function '${namespace}.${name}'`);
        return (scope) => jsonValue(fn(...evaluateArgs(scope)));
      }
      const receiver = this.compile(object, depth);
      const method = METHODS[name];
      if (!method) this.fail(`unknown method '.${name}()'`);
      return (scope) => jsonValue(method(receiver(scope), evaluateArgs(scope)));
    }
    return this.fail("only the listed functions can be called");
  }

  private unary(node: jsep.UnaryExpression, depth: number): Evaluator {
    if (!UNARY_OPERATORS.has(node.operator)) this.fail(`operator '${node.operator}' is not supported`);
    const argument = this.compile(node.argument, depth + 1);
    switch (node.operator) {
      case "!":
        return (scope) => !truthy(argument(scope));
      case "-":
        return (scope) => {
          const value = argument(scope);
          return typeof value === "number" ? jsonValue(-value) : null;
        };
      default:
        return (scope) => toNumber(argument(scope));
    }
  }

  private binary(node: jsep.BinaryExpression, depth: number): Evaluator {
    const operator = node.operator;
    if (!BINARY_OPERATORS.has(operator)) this.fail(`operator '${operator}' is not supported`);
    const left = this.compile(node.left, depth);
    const right = this.compile(node.right, depth + 1);
    switch (operator) {
      case "&&":
        return (scope) => {
          const value = left(scope);
          return truthy(value) ? right(scope) : value;
        };
      case "||":
        return (scope) => {
          const value = left(scope);
          return truthy(value) ? value : right(scope);
        };
      case "??":
        return (scope) => left(scope) ?? right(scope);
      case "===":
        return (scope) => deepEqual(left(scope), right(scope));
      case "!==":
        return (scope) => !deepEqual(left(scope), right(scope));
      case "==":
        return (scope) => looseEqual(left(scope), right(scope));
      case "!=":
        return (scope) => !looseEqual(left(scope), right(scope));
      case "<":
      case "<=":
      case ">":
      case ">=":
        return (scope) => compareValues(operator, left(scope), right(scope));
      default:
        return (scope) => jsonValue(arithmetic(operator, left(scope), right(scope)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Compiles one expression (without `{{ }}`). `fieldPath` names the config field in errors, as a
 * path relative to the config, as paths.ts names them (e.g. `fields/0/expression`).
 */
export function compileExpression(source: string, fieldPath: string): CompiledExpression {
  const fail = (message: string): never => {
    throw new UtilityConfigError(fieldPath, `invalid expression: ${message}`);
  };
  if (typeof source !== "string") fail("an expression must be a string");
  if (source.length > MAX_EXPRESSION_LENGTH) fail(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  if (source.trim() === "") fail("the expression is empty");
  const prepared = prepareSource(source, fail);
  let tree: Node;
  try {
    tree = jsep(prepared);
  } catch (error) {
    return fail((error as Error).message);
  }
  const evaluator = new Compiler(fail, Date.now()).compile(tree, 1);
  return { source, evaluate: (scope, work) => counted(work, () => jsonValue(evaluator(scope))) };
}

export interface CompiledTemplate {
  readonly source: string;
  /** true when the template holds at least one `{{ }}` part */
  readonly dynamic: boolean;
  evaluate(scope: ExpressionScope, work?: WorkBudget): unknown;
}

/**
 * Compiles a template: a string with `{{ expression }}` parts. A template that is exactly one part
 * keeps the value's type; otherwise the parts are interpolated into a string (null as "", objects and
 * arrays as JSON). A string without parts is its own constant value.
 */
export function compileTemplate(source: string, fieldPath: string): CompiledTemplate {
  const fail = (message: string): never => {
    throw new UtilityConfigError(fieldPath, `invalid template: ${message}`);
  };
  if (typeof source !== "string") fail("a template must be a string");
  const parts = splitTemplate(source, fail).map((part) =>
    typeof part === "string" ? part : compileExpression(part.expression, fieldPath),
  );
  const dynamic = parts.some((part) => typeof part !== "string");
  if (parts.length === 1 && typeof parts[0] !== "string") {
    const only = parts[0];
    return { source, dynamic, evaluate: (scope, work) => only.evaluate(scope, work) };
  }
  return {
    source,
    dynamic,
    evaluate: (scope, work) =>
      counted(work, () =>
        joined(
          parts.map((part) => (typeof part === "string" ? part : textOf(part.evaluate(scope)))),
          "",
        ),
      ),
  };
}

/** `{{ expr }}` or a bare expression (generate.filter's `condition` accepts both). */
export function compileCondition(source: string, fieldPath: string): CompiledExpression {
  const trimmed = source.trim();
  const whole = /^\{\{([\s\S]*)\}\}$/.exec(trimmed);
  if (whole && !whole[1].includes("{{")) return compileExpression(whole[1], fieldPath);
  return compileExpression(source, fieldPath);
}
