/**
 * The headers of a catalogue page (the HTML shell). The Content-Security-Policy allows scripts,
 * styles, fetches and images from this origin only: no inline script or style, no eval (NiiVue reads
 * NIfTI in plain JavaScript and needs no WebAssembly for it), images also from blob: URLs (a private
 * brain's preview is fetched with the token) and data: URLs (NiiVue's font atlas), and no framing.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function pageHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': PAGE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
  };
}
