/**
 * Tokenizer for the subset of mksh (`/system/bin/sh`) the simulator understands: words with single
 * quotes, double quotes and backslash escapes, `$NAME` / `${NAME}` / `$?` / `$$` / `$#` / `$0`..`$9`
 * parameters, `$(...)` and backquote command substitution, operators `; & && || | ( )` and
 * newlines, redirections `[n]> [n]>> [n]< [n]>& [n]<&`, and `#` comments. Pure: never does I/O,
 * never throws anything but `ShellSyntaxError`.
 */

/** A syntax error, printed as `/system/bin/sh: <message>`. */
export class ShellSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShellSyntaxError';
  }
}

/** A piece of a word. `quoted` parts are neither field-split nor globbed. */
export type WordPart =
  | { type: 'text'; value: string; quoted: boolean }
  | { type: 'param'; name: string; quoted: boolean }
  | { type: 'command'; source: string; quoted: boolean };

export type Operator = ';' | '&' | '&&' | '||' | '|' | '(' | ')' | '\n';
export type RedirectOp = '>' | '>>' | '<' | '>&' | '<&' | '>|';

export type Token =
  | { kind: 'word'; parts: WordPart[] }
  | { kind: 'op'; op: Operator }
  | { kind: 'redirect'; op: RedirectOp; fd: number | undefined };

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const SPECIAL_PARAMS = new Set(['?', '$', '#', '!', '@', '*', '-']);
const WORD_BREAK = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = source.length;

  const readParam = (quoted: boolean): WordPart | undefined => {
    // source[i] === '$'
    const next = source[i + 1];
    if (next === undefined) return undefined;
    if (next === '{') {
      const close = source.indexOf('}', i + 2);
      if (close < 0) throw new ShellSyntaxError(`\${: missing }`);
      const name = source.slice(i + 2, close);
      if (!isParamName(name)) throw new ShellSyntaxError(`\${${name}}: bad substitution`);
      i = close + 1;
      return { type: 'param', name, quoted };
    }
    if (next === '(') {
      const end = findClosingParen(source, i + 2);
      const inner = source.slice(i + 2, end);
      i = end + 1;
      return { type: 'command', source: inner, quoted };
    }
    if (SPECIAL_PARAMS.has(next) || /[0-9]/.test(next)) {
      i += 2;
      return { type: 'param', name: next, quoted };
    }
    if (NAME_START.test(next)) {
      let j = i + 2;
      while (j < n && NAME_CHAR.test(source[j] as string)) j++;
      const name = source.slice(i + 1, j);
      i = j;
      return { type: 'param', name, quoted };
    }
    return undefined;
  };

  const readBackquote = (quoted: boolean): WordPart => {
    // source[i] === '`'
    let j = i + 1;
    let inner = '';
    while (j < n && source[j] !== '`') {
      if (source[j] === '\\' && j + 1 < n && '$`\\'.includes(source[j + 1] as string)) {
        inner += source[j + 1];
        j += 2;
        continue;
      }
      inner += source[j];
      j++;
    }
    if (j >= n) throw new ShellSyntaxError('no closing quote');
    i = j + 1;
    return { type: 'command', source: inner, quoted };
  };

  while (i < n) {
    const c = source[i] as string;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '\\' && source[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '#') {
      while (i < n && source[i] !== '\n') i++;
      continue;
    }
    if (c === '\n' || c === ';' || c === '(' || c === ')') {
      tokens.push({ kind: 'op', op: c });
      i++;
      continue;
    }
    if (c === '&' || c === '|') {
      if (source[i + 1] === c) {
        tokens.push({ kind: 'op', op: c === '&' ? '&&' : '||' });
        i += 2;
      } else {
        tokens.push({ kind: 'op', op: c });
        i++;
      }
      continue;
    }
    // Redirection, optionally preceded by a file descriptor number (`2>`).
    const redirect = /^([0-9]?)(>>|>&|<&|>\||>|<)/.exec(source.slice(i, i + 3));
    if (redirect !== null && (redirect[1] === '' || /[<>]/.test(source[i + 1] ?? ''))) {
      const fd = redirect[1] === '' ? undefined : Number(redirect[1]);
      tokens.push({ kind: 'redirect', op: redirect[2] as RedirectOp, fd });
      i += redirect[0].length;
      continue;
    }

    // A word: runs until an unquoted break character.
    const parts: WordPart[] = [];
    const pushText = (value: string, quoted: boolean): void => {
      const last = parts[parts.length - 1];
      if (last !== undefined && last.type === 'text' && last.quoted === quoted) last.value += value;
      else parts.push({ type: 'text', value, quoted });
    };
    while (i < n && !WORD_BREAK.has(source[i] as string)) {
      const ch = source[i] as string;
      if (ch === "'") {
        const close = source.indexOf("'", i + 1);
        if (close < 0) throw new ShellSyntaxError('no closing quote');
        pushText(source.slice(i + 1, close), true);
        i = close + 1;
      } else if (ch === '"') {
        i++;
        pushText('', true);
        for (;;) {
          if (i >= n) throw new ShellSyntaxError('no closing quote');
          const d = source[i] as string;
          if (d === '"') {
            i++;
            break;
          }
          if (d === '\\') {
            const e = source[i + 1];
            if (e !== undefined && '$`"\\\n'.includes(e)) {
              if (e !== '\n') pushText(e, true);
              i += 2;
            } else {
              pushText('\\', true);
              i++;
            }
          } else if (d === '$') {
            const part = readParam(true);
            if (part === undefined) {
              pushText('$', true);
              i++;
            } else parts.push(part);
          } else if (d === '`') {
            parts.push(readBackquote(true));
          } else {
            pushText(d, true);
            i++;
          }
        }
      } else if (ch === '\\') {
        const e = source[i + 1];
        if (e === undefined) {
          pushText('\\', false);
          i++;
        } else if (e === '\n') {
          i += 2;
        } else {
          pushText(e, true);
          i += 2;
        }
      } else if (ch === '$') {
        const part = readParam(false);
        if (part === undefined) {
          pushText('$', false);
          i++;
        } else parts.push(part);
      } else if (ch === '`') {
        parts.push(readBackquote(false));
      } else {
        pushText(ch, false);
        i++;
      }
    }
    tokens.push({ kind: 'word', parts });
  }
  return tokens;
}

function isParamName(name: string): boolean {
  return /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]|[?$#!@*-])$/.test(name);
}

/** Index of the `)` closing a `$(` whose body starts at `start`, honouring quotes and nesting. */
function findClosingParen(source: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === "'") {
      const close = source.indexOf("'", i + 1);
      if (close < 0) throw new ShellSyntaxError('no closing quote');
      i = close + 1;
      continue;
    }
    if (c === '"') {
      i++;
      while (i < source.length && source[i] !== '"') i += source[i] === '\\' ? 2 : 1;
      if (i >= source.length) throw new ShellSyntaxError('no closing quote');
      i++;
      continue;
    }
    if (c === '(') depth++;
    if (c === ')') {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  throw new ShellSyntaxError("syntax error: unexpected EOF while looking for matching ')'");
}

/** Quote `value` for this shell (single quotes; `'` becomes `'\''`). */
export function quoteArg(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
