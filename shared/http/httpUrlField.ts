import { Type } from '@sinclair/typebox';
import { ERROR_MESSAGE_KEYWORD } from './validationMessages';

/** An absolute http(s) URL, or "" for none (what an empty form field sends). */
export const httpUrlField = Type.String({
  maxLength: 2000,
  pattern: '^(https?://[^\\s/?#]+[^\\s]*)?$',
  [ERROR_MESSAGE_KEYWORD]: 'Enter a valid URL (http or https).',
});
