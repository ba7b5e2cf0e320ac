/**
 * Parser for the simulator's mksh subset: lists of and-or chains of pipelines of simple commands
 * (`VAR=value cmd args <redirects>`), optionally negated with `!`, and `( ... )` / `{ ...; }`
 * groups. Pure; throws only `ShellSyntaxError` with mksh's wording.
 */
import {
  type Operator,
  type RedirectOp,
  ShellSyntaxError,
  type Token,
  tokenize,
  type WordPart,
} from './tokenizer.ts';

export type Word = WordPart[];

export interface Redirect {
  /** File descriptor redirected (0 for `<`, 1 for `>` when not given). */
  fd: number;
  op: RedirectOp;
  target: Word;
}

export interface SimpleCommand {
  kind: 'simple';
  assignments: Array<{ name: string; value: Word }>;
  words: Word[];
  redirects: Redirect[];
}

export interface GroupCommand {
  kind: 'group';
  /** `( ... )` runs in a subshell (its `exit` and variables stay inside); `{ ...; }` does not. */
  subshell: boolean;
  body: Script;
  redirects: Redirect[];
}

export type Command = SimpleCommand | GroupCommand;

export interface Pipeline {
  negate: boolean;
  commands: Command[];
}

export interface AndOr {
  first: Pipeline;
  rest: Array<{ op: '&&' | '||'; pipeline: Pipeline }>;
  /** Ended with `&` (the simulator still runs it to completion, in order). */
  background: boolean;
}

export type Script = AndOr[];

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;

export function parse(source: string): Script {
  return new Parser(tokenize(source)).parseProgram();
}

class Parser {
  readonly #tokens: Token[];
  #pos = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parseProgram(): Script {
    const script = this.#parseList(undefined);
    const extra = this.#peek();
    if (extra !== undefined) throw unexpected(extra);
    return script;
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#pos];
  }

  #isOp(op: Operator): boolean {
    const t = this.#peek();
    return t?.kind === 'op' && t.op === op;
  }

  #isWord(text: string): boolean {
    const t = this.#peek();
    return t?.kind === 'word' && literalWord(t.parts) === text;
  }

  #skipNewlines(): void {
    while (this.#isOp('\n')) this.#pos++;
  }

  /** A list until EOF or the closing token of a group (`)` or the word `}`). */
  #parseList(close: ')' | '}' | undefined): Script {
    const script: Script = [];
    for (;;) {
      this.#skipNewlines();
      const t = this.#peek();
      if (t === undefined) break;
      if (close === ')' && t.kind === 'op' && t.op === ')') break;
      if (close === '}' && this.#isWord('}')) break;
      const andOr = this.#parseAndOr();
      script.push(andOr);
      const sep = this.#peek();
      if (sep === undefined) break;
      if (sep.kind === 'op' && (sep.op === ';' || sep.op === '&' || sep.op === '\n')) {
        this.#pos++;
        if (sep.op === '&') andOr.background = true;
        continue;
      }
      if (close === ')' && sep.kind === 'op' && sep.op === ')') break;
      if (close === '}' && this.#isWord('}')) break;
      throw unexpected(sep);
    }
    return script;
  }

  #parseAndOr(): AndOr {
    const first = this.#parsePipeline();
    const rest: AndOr['rest'] = [];
    for (;;) {
      const t = this.#peek();
      if (t?.kind !== 'op' || (t.op !== '&&' && t.op !== '||')) break;
      this.#pos++;
      this.#skipNewlines();
      rest.push({ op: t.op, pipeline: this.#parsePipeline() });
    }
    return { first, rest, background: false };
  }

  #parsePipeline(): Pipeline {
    let negate = false;
    while (this.#isWord('!')) {
      this.#pos++;
      negate = !negate;
    }
    const commands = [this.#parseCommand()];
    while (this.#isOp('|')) {
      this.#pos++;
      this.#skipNewlines();
      commands.push(this.#parseCommand());
    }
    return { negate, commands };
  }

  #parseCommand(): Command {
    const t = this.#peek();
    if (t === undefined) throw new ShellSyntaxError('syntax error: unexpected EOF');
    if (t.kind === 'op' && t.op === '(') {
      this.#pos++;
      const body = this.#parseList(')');
      if (!this.#isOp(')')) throw this.#unexpectedHere();
      this.#pos++;
      if (body.length === 0) throw new ShellSyntaxError("syntax error: ')' unexpected");
      return { kind: 'group', subshell: true, body, redirects: this.#parseRedirects() };
    }
    if (this.#isWord('{')) {
      this.#pos++;
      const body = this.#parseList('}');
      if (!this.#isWord('}')) throw this.#unexpectedHere();
      this.#pos++;
      if (body.length === 0) throw new ShellSyntaxError("syntax error: '}' unexpected");
      return { kind: 'group', subshell: false, body, redirects: this.#parseRedirects() };
    }
    return this.#parseSimple();
  }

  #parseRedirects(): Redirect[] {
    const redirects: Redirect[] = [];
    for (;;) {
      const t = this.#peek();
      if (t?.kind !== 'redirect') return redirects;
      redirects.push(this.#parseRedirect());
    }
  }

  #parseRedirect(): Redirect {
    const t = this.#tokens[this.#pos++];
    if (t?.kind !== 'redirect') throw new ShellSyntaxError('syntax error: unexpected EOF');
    const target = this.#peek();
    if (target?.kind !== 'word') throw this.#unexpectedHere();
    this.#pos++;
    const fd = t.fd ?? (t.op === '<' || t.op === '<&' ? 0 : 1);
    return { fd, op: t.op, target: target.parts };
  }

  #parseSimple(): SimpleCommand {
    const command: SimpleCommand = { kind: 'simple', assignments: [], words: [], redirects: [] };
    for (;;) {
      const t = this.#peek();
      if (t === undefined || t.kind === 'op') break;
      if (t.kind === 'redirect') {
        command.redirects.push(this.#parseRedirect());
        continue;
      }
      this.#pos++;
      const assignment = command.words.length === 0 ? splitAssignment(t.parts) : undefined;
      if (assignment !== undefined) command.assignments.push(assignment);
      else command.words.push(t.parts);
    }
    if (command.words.length === 0 && command.assignments.length === 0 && command.redirects.length === 0) {
      throw this.#unexpectedHere();
    }
    return command;
  }

  #unexpectedHere(): ShellSyntaxError {
    const t = this.#peek();
    return t === undefined ? new ShellSyntaxError('syntax error: unexpected EOF') : unexpected(t);
  }
}

function unexpected(token: Token): ShellSyntaxError {
  let text: string;
  if (token.kind === 'op') text = token.op === '\n' ? 'newline' : token.op;
  else if (token.kind === 'redirect') text = `${token.fd ?? ''}${token.op}`;
  else text = literalWord(token.parts) ?? 'word';
  return new ShellSyntaxError(`syntax error: '${text}' unexpected`);
}

/** The text of a word made only of unquoted text, else undefined. */
function literalWord(parts: WordPart[]): string | undefined {
  const [only, ...rest] = parts;
  return only !== undefined && rest.length === 0 && only.type === 'text' && !only.quoted
    ? only.value
    : undefined;
}

function splitAssignment(parts: WordPart[]): { name: string; value: Word } | undefined {
  const first = parts[0];
  if (first?.type !== 'text' || first.quoted) return undefined;
  const match = ASSIGNMENT.exec(first.value);
  if (match === null) return undefined;
  const name = match[1] as string;
  const remainder = first.value.slice(match[0].length);
  const value: Word = remainder === '' ? [] : [{ type: 'text', value: remainder, quoted: false }];
  value.push(...parts.slice(1));
  return { name, value };
}
