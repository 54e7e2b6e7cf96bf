/**
 * The work budget of one run (utilities/budget.ts WorkBudget): what an inline run may take of the event
 * loop, counted over every expression evaluation of the run and every step of a pipeline, not per
 * evaluation. A clock that moves one millisecond each time it is read makes the checks countable.
 */
import { describe, expect, test } from "bun:test";
import { runSteps, type Step, validateConfig } from "../../src/engine/execution";
import { OutputBudget, WorkBudget, WorkBudgetExceededError } from "../../src/utilities/budget";
import { registry } from "../../src/utilities/registry";
import { compileExpression, compileTemplate, ExpressionTooLargeError } from "../../src/utilities/shared/expressions";

/** A budget of `limitMs` on a clock that advances 1 ms per reading, and how often it was read. */
function ticking(limitMs: number): { budget: WorkBudget; readings: () => number } {
  let clock = 0;
  const budget = new WorkBudget(limitMs, () => clock++);
  return { budget, readings: () => clock };
}

const step = (id: string, config: Record<string, unknown>): Step => {
  const utility = registry.find(id)!;
  return { utility, config: validateConfig(utility, config) };
};

/** The finding's condition (issue 33): 13 joins of the root with itself, about 16.6 M characters per element. */
const JOINS = Array.from({ length: 13 }, () => "join($root,$root)").join(" + ");

describe("WorkBudget", () => {
  test("passes until its time is used, then throws WorkBudgetExceededError naming the limit", () => {
    const { budget } = ticking(3);
    budget.check();
    budget.check();
    budget.check();
    expect(() => budget.check()).toThrow(WorkBudgetExceededError);
    expect(() => budget.check()).toThrow("inline budget of 3 ms");
  });

  test("on the real clock, a generous budget lets a short run through", () => {
    const budget = new WorkBudget(60_000);
    expect(() => budget.check()).not.toThrow();
  });
});

describe("expressions charge the run's budget, not one evaluation's", () => {
  test("one budget is checked across evaluations: each is cheap, their total is not", () => {
    const expression = compileExpression("$ + 1", "condition");
    const { budget } = ticking(100);
    let evaluations = 0;
    const evaluateAll = () => {
      for (let i = 0; i < 1000; i++) {
        expression.evaluate({ record: i }, budget);
        evaluations++;
      }
    };
    expect(evaluateAll).toThrow(WorkBudgetExceededError);
    expect(evaluations).toBe(100);
  });

  test("a long evaluation is checked as it builds, not only when it starts", () => {
    const root = Array(800).fill(0);
    const { budget, readings } = ticking(5);
    expect(() => compileExpression(JOINS, "condition").evaluate({ record: 0, root }, budget)).toThrow(WorkBudgetExceededError);
    // stopped within the 13 joins of the first evaluation
    expect(readings()).toBeLessThan(13);
  });

  test("a template's parts share the template's evaluation and the run's budget", () => {
    const template = compileTemplate("{{ a }}-{{ b }}-{{ join(c, '/') }}", "replacement");
    const { budget, readings } = ticking(1_000);
    expect(template.evaluate({ record: { a: 1, b: 2, c: ["x", "y"] } }, budget)).toBe("1-2-x/y");
    expect(readings()).toBeGreaterThan(1);
  });

  test("without a budget (a worker's run), evaluation is bounded per evaluation only, as before", () => {
    const root = Array(800).fill(0);
    const result = compileExpression(JOINS, "condition").evaluate({ record: 0, root }) as string;
    expect(result.length).toBe(13 * (799 * JSON.stringify(root).length + 800));
    expect(() => compileExpression(`${JOINS} + join($root,$root)`, "condition").evaluate({ record: 0, root })).toThrow(
      ExpressionTooLargeError,
    );
  });
});

describe("utilities and pipelines", () => {
  const zeros = Array(800).fill(0);

  test("generate.filter with the finding's condition stops on the budget instead of evaluating 800 times", () => {
    const filter = registry.find("generate.filter")!;
    const { budget } = ticking(50);
    const config = validateConfig(filter, { condition: JOINS });
    expect(() => filter.run({ primary: zeros }, config as never, new OutputBudget(Number.POSITIVE_INFINITY, budget))).toThrow(
      WorkBudgetExceededError,
    );
  });

  test("structure.restructure, structure.find-replace and schema.compute pass the budget to their templates", () => {
    const cases: [string, unknown, Record<string, unknown>][] = [
      ["structure.restructure", [{ a: 1 }, { a: 2 }], { template: { b: "{{ a + 1 }}" } }],
      ["structure.find-replace", [{ a: "x" }, { a: "x" }], { search: "x", replacement: "{{ old + old }}" }],
      ["schema.compute", [{ a: 1 }, { a: 2 }], { fields: [{ target: "b", expression: "{{ a * 2 }}" }] }],
    ];
    for (const [id, primary, config] of cases) {
      const utility = registry.find(id)!;
      const { budget, readings } = ticking(1);
      const run = () =>
        utility.run({ primary }, validateConfig(utility, config) as never, new OutputBudget(Number.POSITIVE_INFINITY, budget));
      expect(run).toThrow(WorkBudgetExceededError);
      expect(readings()).toBeGreaterThan(1);
    }
  });

  test("the steps of a pipeline share one budget: checked between steps, passed through untranslated", async () => {
    const cheap = step("generate.filter", { condition: "$ >= 0" });
    // 800 evaluations per step, one clock reading each (plus one per step): 20 steps need about 16,000
    const steps = Array.from({ length: 20 }, () => cheap);
    const primary = { value: zeros };
    const whole = await runSteps(steps, primary, true, Number.POSITIVE_INFINITY, ticking(1_000_000).budget);
    expect(JSON.parse((whole as { outputJson: string }).outputJson)).toEqual(zeros);
    const { budget, readings } = ticking(2_000);
    await expect(runSteps(steps, primary, true, Number.POSITIVE_INFINITY, budget)).rejects.toBeInstanceOf(WorkBudgetExceededError);
    // stopped in the third step: each alone is within the budget, the run is not
    expect(readings()).toBeGreaterThan(1_600);
    expect(readings()).toBeLessThan(2_500);
  });

  test("within the budget, answers are the ones a run without a budget gives", async () => {
    const steps = [step("generate.filter", { condition: "n > 1" }), step("structure.restructure", { template: { v: "{{ n * 10 }}" } })];
    const primary = { value: [{ n: 1 }, { n: 2 }, { n: 3 }] };
    const budgeted = await runSteps(steps, primary, true, Number.POSITIVE_INFINITY, new WorkBudget(60_000));
    const unbudgeted = await runSteps(steps, primary, true, Number.POSITIVE_INFINITY);
    expect((budgeted as { outputJson: string }).outputJson).toBe('[{"v":20},{"v":30}]');
    expect((unbudgeted as { outputJson: string }).outputJson).toBe('[{"v":20},{"v":30}]');
  });
});
