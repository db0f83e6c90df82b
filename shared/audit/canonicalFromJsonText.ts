/**
 * canonicalJson(JSON.parse(text)) (ledgerCanonicalJson.ts), computed from the JSON text itself:
 * members sorted by their names' UTF-16 code units, no whitespace, strings and numbers as
 * JSON.stringify writes the values JSON.parse gives. No object is built per member, so the garbage
 * collector has little to do: verify-ledger canonicalises every event's data and metadata as
 * PostgreSQL prints them (jsonb's text: `{"a": 1, "b": [2, 3]}`). A unit test holds the two equal on
 * random values, and an integration test on jsonb's own text.
 *
 * `replace`, for the outermost object only: the member of that name is left out, and the given
 * canonical text stands as its value instead (`{...metadata, recordedAt}` in one pass).
 * Malformed text throws.
 */
export function canonicalFromJsonText(
  text: string,
  replace?: readonly [name: string, value: string],
): string {
  const scanner = new Scanner(text);
  scanner.space();
  const out = replace && scanner.peek() === OPEN_BRACE ? scanner.object(replace) : scanner.value();
  scanner.space();
  if (!scanner.atEnd()) throw new SyntaxError(`unexpected text after JSON at ${scanner.at()}`);
  return out;
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;

/** An integer JSON.stringify writes as given: 0, or up to 15 digits (exact in a double), no "-0". */
const PLAIN_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

interface Member {
  /** The name as JSON.parse gives it (what the order compares). */
  readonly name: string;
  /** `"name":value`, canonical. */
  readonly text: string;
}

const byName = (a: Member, b: Member): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

class Scanner {
  private pos = 0;

  constructor(private readonly text: string) {}

  at(): number {
    return this.pos;
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): number {
    return this.text.charCodeAt(this.pos);
  }

  space(): void {
    const { text } = this;
    for (;;) {
      const c = text.charCodeAt(this.pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.pos++;
      else return;
    }
  }

  private expect(code: number): void {
    this.space();
    if (this.text.charCodeAt(this.pos) !== code)
      throw new SyntaxError(`expected '${String.fromCharCode(code)}' at ${this.pos}`);
    this.pos++;
  }

  value(): string {
    this.space();
    const c = this.text.charCodeAt(this.pos);
    if (c === OPEN_BRACE) return this.object(undefined);
    if (c === OPEN_BRACKET) return this.array();
    if (c === QUOTE) return this.string().text;
    return this.literal();
  }

  /** A string: its canonical text, and its value. */
  string(): { text: string; value: string } {
    const { text } = this;
    const start = this.pos;
    let escaped = false;
    let i = start + 1;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        i += 2;
      } else if (Number.isNaN(c)) throw new SyntaxError(`unterminated string at ${start}`);
      else {
        if (c < 32) throw new SyntaxError(`control character in a string at ${i}`);
        i++;
      }
    }
    this.pos = i + 1;
    const raw = text.slice(start, i + 1);
    if (!escaped) return { text: raw, value: raw.slice(1, -1) };
    // Escapes are written the way JSON.stringify writes them (\u00e9 becomes é, \/ becomes /).
    const value = JSON.parse(raw) as string;
    return { text: JSON.stringify(value), value };
  }

  private literal(): string {
    const { text } = this;
    const start = this.pos;
    let end = start;
    for (;;) {
      const c = text.charCodeAt(end);
      if (
        Number.isNaN(c) ||
        c === COMMA ||
        c === CLOSE_BRACE ||
        c === CLOSE_BRACKET ||
        c === 32 ||
        c === 10 ||
        c === 13 ||
        c === 9
      )
        break;
      end++;
    }
    const token = text.slice(start, end);
    this.pos = end;
    if (token === 'true' || token === 'false' || token === 'null') return token;
    if (PLAIN_INTEGER.test(token)) return token;
    // Any other number: the double JSON.parse would give, as JSON.stringify writes it (1.0 is 1).
    const parsed = JSON.parse(token) as unknown;
    if (typeof parsed !== 'number') throw new SyntaxError(`unexpected ${token} at ${start}`);
    return JSON.stringify(parsed);
  }

  private array(): string {
    this.pos++; // [
    this.space();
    if (this.text.charCodeAt(this.pos) === CLOSE_BRACKET) {
      this.pos++;
      return '[]';
    }
    let out = '[';
    for (;;) {
      out += this.value();
      this.space();
      const c = this.text.charCodeAt(this.pos++);
      if (c === CLOSE_BRACKET) return `${out}]`;
      if (c !== COMMA) throw new SyntaxError(`expected ',' or ']' at ${this.pos - 1}`);
      out += ',';
    }
  }

  object(replace: readonly [string, string] | undefined): string {
    this.expect(OPEN_BRACE);
    const members: Member[] = [];
    this.space();
    if (this.text.charCodeAt(this.pos) === CLOSE_BRACE) this.pos++;
    else
      for (;;) {
        this.space();
        if (this.text.charCodeAt(this.pos) !== QUOTE)
          throw new SyntaxError(`expected a member name at ${this.pos}`);
        const name = this.string();
        this.expect(COLON);
        const value = this.value();
        members.push({ name: name.value, text: `${name.text}:${value}` });
        this.space();
        const c = this.text.charCodeAt(this.pos++);
        if (c === CLOSE_BRACE) break;
        if (c !== COMMA) throw new SyntaxError(`expected ',' or '}' at ${this.pos - 1}`);
      }
    // Last, so that it is the one kept of its name (below).
    if (replace) members.push({ name: replace[0], text: `${JSON.stringify(replace[0])}:${replace[1]}` });
    if (members.length === 0) return '{}';
    // Stable: members of one name stay in the text's order, and JSON.parse keeps the last of them.
    if (members.length > 1) members.sort(byName);
    let out = '{';
    for (let i = 0; i < members.length; i++) {
      const member = members[i]!;
      if (i + 1 < members.length && members[i + 1]!.name === member.name) continue;
      out += out.length === 1 ? member.text : `,${member.text}`;
    }
    return `${out}}`;
  }
}
