import path from 'node:path';

/**
 * The file name a Content-Disposition header offers (RFC 6266: `filename*` in RFC 5987 form wins
 * over `filename`), reduced to a safe base name; undefined when there is none usable.
 */
export function dispositionFilename(header: string | null): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)'[^']*'([^;\s]+)/.exec(header)?.[1];
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/.exec(header);
  let name: string | undefined;
  try {
    name = extended === undefined ? undefined : decodeURIComponent(extended);
  } catch {
    name = undefined;
  }
  name ??= plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2];
  return name === undefined ? undefined : safeBaseName(name);
}

/** A name that stays in the current directory: no separators, no control characters, not `.`/`..`. */
export function safeBaseName(name: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const base = path.basename(name.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '');
  return base === '' || base === '.' || base === '..' ? undefined : base;
}
