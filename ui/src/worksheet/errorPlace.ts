// Where an error of a worksheet's run is in the editor. The api and the engine count from the start of the text
// that was sent (one statement of "run all", or a selection), so a position is moved by where that text begins in
// the worksheet: a syntax error's offset (details.position), a policy refusal's "at line L, column C", the engine's
// "LINE n: …" with its caret, or else the name the engine says it cannot find. The engine's candidates ("Candidate
// bindings", "Did you mean") are given back as a list, so the worksheet can offer them.
import { ApiError } from '../api/client.ts';
import { errorSpan } from './Editor.tsx';

export interface ErrorPlace {
  /** 1-based, in the editor */
  line: number;
  column: number;
  /** the message, its own position words replaced by the editor's */
  message: string;
  span: { from: number; to: number };
  /** names the engine suggests, best first */
  candidates: string[];
}

/** The editor offset of a code-point offset into the text that starts at `from`. */
function atOffset(doc: string, from: number, offset: number): number {
  return Math.min(doc.length, from + Array.from(doc.slice(from)).slice(0, offset).join('').length);
}

/** The editor offset of 1-based line and column (code points) of the text that starts at `from`. */
function atLineColumn(doc: string, from: number, line: number, column: number): number {
  let at = from;
  for (let l = 1; l < line; l++) {
    const nl = doc.indexOf('\n', at);
    if (nl < 0) break;
    at = nl + 1;
  }
  return atOffset(doc, at, Math.max(0, column - 1));
}

function lineColumnOf(doc: string, at: number) {
  const before = doc.slice(0, at);
  return { line: before.split('\n').length, column: at - (before.lastIndexOf('\n') + 1) + 1 };
}

/** The names an engine message suggests: `Candidate bindings: "a", "t.b"` or `Did you mean "x"?`. */
export function candidatesIn(message: string): string[] {
  const out: string[] = [];
  const bindings = /Candidate bindings:\s*([^\n]*)/i.exec(message);
  if (bindings) for (const m of bindings[1].matchAll(/"((?:[^"]|"")+)"/g)) out.push(m[1].replace(/""/g, '"'));
  for (const m of message.matchAll(/Did you mean\s+"((?:[^"]|"")+)"/gi)) out.push(m[1].replace(/""/g, '"'));
  // a binding is offered qualified ("trips.fare"); the column is what a user types
  return [...new Set(out.map((c) => (/^[\w$]+\.[\w$]+$/.test(c) && bindings ? c.split('.').pop()! : c)))];
}

/** The engine's `LINE n: <snippet>` with a caret under it: where in the sent text it points. */
function caretIn(message: string, doc: string, from: number): number | null {
  const m = /LINE (\d+): ([^\n]*)\n( *)\^/.exec(message);
  if (!m) return null;
  const line = Number(m[1]);
  const prefix = `LINE ${m[1]}: `.length;
  let snippet = m[2];
  let caret = m[3].length - prefix;
  // A long line is shown as a window ("...text..."): find the window in the line itself.
  let start = atLineColumn(doc, from, line, 1);
  const lineEnd = doc.indexOf('\n', start) < 0 ? doc.length : doc.indexOf('\n', start);
  if (snippet.startsWith('...')) {
    snippet = snippet.slice(3);
    caret -= 3;
    const found = doc.slice(start, lineEnd).indexOf(snippet.replace(/\.\.\.$/, '').slice(0, 40));
    if (found < 0) return null;
    start += found;
  }
  return Math.max(0, Math.min(start + caret, doc.length));
}

/** An unknown name the message quotes: `column "farez" not found`, `Table with name tripz does not exist`. */
function namedIn(message: string, doc: string, from: number, to: number): number | null {
  const m = /(?:column|name|function)\s+"?([\w$]+)"?\s+(?:not found|does not exist)/i.exec(message) ?? /"([\w$]+)" not found/i.exec(message);
  if (!m) return null;
  const re = new RegExp(`\\b${m[1].replace(/\$/g, '\\$')}\\b`, 'i');
  const hit = re.exec(doc.slice(from, to));
  return hit ? from + hit.index : null;
}

/**
 * Where the step's error is in the worksheet `doc` (the step's text began at `from` and ran `length` characters),
 * or null when it says nothing about a place.
 */
export function errorPlace(doc: string, from: number, length: number, error: unknown, engineMessage: string | null): ErrorPlace | null {
  let at: number | null = null;
  let message = '';
  if (error instanceof ApiError) {
    message = error.message;
    const position = (error.details as { position?: { offset?: number } } | null)?.position;
    if (typeof position?.offset === 'number') {
      at = atOffset(doc, from, position.offset);
      message = message.replace(/^Syntax error at line \d+, column \d+:\s*/i, '');
    } else {
      const lc = /at line (\d+), column (\d+)/.exec(message);
      if (lc) at = atLineColumn(doc, from, Number(lc[1]), Number(lc[2]));
      else at = caretIn(message, doc, from) ?? namedIn(message, doc, from, Math.min(doc.length, from + length));
    }
  } else if (engineMessage) {
    message = engineMessage;
    at = caretIn(message, doc, from) ?? namedIn(message, doc, from, Math.min(doc.length, from + length));
  }
  if (at === null) return null;
  const { line, column } = lineColumnOf(doc, at);
  // The api's words name the sent text's line and column: say the editor's.
  message = message.replace(/at line \d+, column \d+/, `at line ${line}, column ${column}`);
  return { line, column, message, span: errorSpan(doc, at), candidates: candidatesIn(message) };
}
