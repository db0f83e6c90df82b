/**
 * The members of one object in canonical JSON (CanonicalJsonWriter's output: valid, no whitespace,
 * each name once, names written as JSON.stringify writes them), found in its bytes without decoding
 * any of them: member i's name is buffer[nameStarts[i], nameEnds[i]) (between its quotes) and its
 * value's JSON text buffer[valueStarts[i], valueEnds[i]). Reused from object to object.
 */
export class CanonicalMembers {
  count = 0;
  nameStarts = new Int32Array(16);
  nameEnds = new Int32Array(16);
  valueStarts = new Int32Array(16);
  valueEnds = new Int32Array(16);

  /** Finds the members of the object at buffer[start, end); false (and no member) when it is not an object. */
  scan(buffer: Buffer, start: number, end: number): boolean {
    this.count = 0;
    if (buffer[start] !== OPEN_BRACE) return false;
    let i = start + 1;
    if (buffer[i] === CLOSE_BRACE) return true;
    while (i < end) {
      const nameEnd = skipString(buffer, i);
      const valueEnd = skipValue(buffer, nameEnd + 1);
      this.add(i + 1, nameEnd - 1, nameEnd + 1, valueEnd);
      if (buffer[valueEnd] !== COMMA) return true;
      i = valueEnd + 1;
    }
    return true;
  }

  /** The index of the member named `name` (plain ASCII, no escapes), or -1. */
  indexOf(buffer: Buffer, name: Buffer): number {
    for (let m = 0; m < this.count; m++) if (this.nameIs(buffer, m, name)) return m;
    return -1;
  }

  nameIs(buffer: Buffer, member: number, name: Buffer): boolean {
    const start = this.nameStarts[member]!;
    if (this.nameEnds[member]! - start !== name.length) return false;
    for (let k = 0; k < name.length; k++) if (buffer[start + k] !== name[k]) return false;
    return true;
  }

  private add(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number): void {
    if (this.count === this.nameStarts.length) {
      const grow = (a: Int32Array) => {
        const grown = new Int32Array(a.length * 2);
        grown.set(a);
        return grown;
      };
      this.nameStarts = grow(this.nameStarts);
      this.nameEnds = grow(this.nameEnds);
      this.valueStarts = grow(this.valueStarts);
      this.valueEnds = grow(this.valueEnds);
    }
    const m = this.count++;
    this.nameStarts[m] = nameStart;
    this.nameEnds[m] = nameEnd;
    this.valueStarts[m] = valueStart;
    this.valueEnds[m] = valueEnd;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The index just past the string whose opening quote is at `at`. */
function skipString(buffer: Buffer, at: number): number {
  let i = at + 1;
  for (;;) {
    const c = buffer[i];
    if (c === QUOTE) return i + 1;
    if (c === undefined) throw new SyntaxError('unterminated string in canonical JSON');
    i += c === BACKSLASH ? 2 : 1;
  }
}

/** The index just past the value that starts at `at`. */
function skipValue(buffer: Buffer, at: number): number {
  const first = buffer[at];
  if (first === QUOTE) return skipString(buffer, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    let i = at;
    for (;;) {
      const c = buffer[i];
      if (c === undefined) throw new SyntaxError('unterminated value in canonical JSON');
      if (c === QUOTE) {
        i = skipString(buffer, i);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
      i++;
    }
  }
  let i = at;
  for (;;) {
    const c = buffer[i];
    if (c === undefined || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET) return i;
    i++;
  }
}

/** True when buffer[start, end) holds a backslash (a JSON string's escape). */
export function hasEscape(buffer: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buffer[i] === BACKSLASH) return true;
  return false;
}
