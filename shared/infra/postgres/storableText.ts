/** DRF's wording (CharField's ProhibitNullCharactersValidator). */
export const NULL_CHARACTER_MESSAGE = 'Null characters are not allowed.';
export const LONE_SURROGATE_MESSAGE =
  'Unpaired surrogate characters are not allowed (the text is not valid Unicode).';

// Without the u flag a regex sees UTF-16 code units: a high surrogate not followed by a low one,
// or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why PostgreSQL cannot store this text, or undefined when it can: text and jsonb reject U+0000,
 * and a lone surrogate has no UTF-8 encoding. Every string a client sends passes through here.
 */
export function unstorableTextProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return NULL_CHARACTER_MESSAGE;
  if (LONE_SURROGATE.test(text)) return LONE_SURROGATE_MESSAGE;
  return undefined;
}
