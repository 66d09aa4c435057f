import type { Arith, Program, VariableRef, Word } from './syntax.js';

/** Shared by every word without such parts: a 128 KiB line of 40,000 words must not cost 200,000 empty arrays. */
const NONE: readonly never[] = Object.freeze([]);

/** Collects one word's value and what its expansion does, part by part. */
export class WordBuilder {
  value = '';
  literal = true;
  fromData = false;
  #programs: Program[] | undefined;
  #arith: Arith[] | undefined;
  #vars: VariableRef[] | undefined;
  #problems: string[] | undefined;

  get programs(): readonly Program[] {
    return this.#programs ?? NONE;
  }

  get arith(): readonly Arith[] {
    return this.#arith ?? NONE;
  }

  get vars(): readonly VariableRef[] {
    return this.#vars ?? NONE;
  }

  get problems(): readonly string[] {
    return this.#problems ?? NONE;
  }

  addPrograms(...programs: Program[]): void {
    if (programs.length > 0) (this.#programs ??= []).push(...programs);
  }

  addArith(...arith: Arith[]): void {
    if (arith.length > 0) (this.#arith ??= []).push(...arith);
  }

  addVars(...vars: VariableRef[]): void {
    if (vars.length > 0) (this.#vars ??= []).push(...vars);
  }

  addProblems(...problems: string[]): void {
    if (problems.length > 0) (this.#problems ??= []).push(...problems);
  }

  /** Text bash passes as it is (quoted, or unquoted and not special). */
  text(text: string): void {
    this.value += text;
  }

  /** The word's value is known only when it runs. */
  dynamic(): void {
    this.literal = false;
  }

  /** Takes over what another builder collected (a nested part), not its value. */
  absorb(inner: WordBuilder | Word): void {
    this.addPrograms(...inner.programs);
    this.addArith(...inner.arith);
    this.addVars(...inner.vars);
    this.addProblems(...inner.problems);
    if (inner.fromData) this.fromData = true;
  }

  build(raw: string): Word {
    return {
      raw,
      literal: this.literal,
      value: this.literal ? this.value : raw,
      programs: this.programs,
      arith: this.arith,
      vars: this.vars,
      fromData: this.fromData,
      problems: this.problems,
    };
  }
}

/** A word with nothing to expand. */
export function plainWord(text: string): Word {
  const builder = new WordBuilder();
  builder.text(text);
  return builder.build(text);
}
