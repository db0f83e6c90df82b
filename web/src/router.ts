import { useEffect, useState } from 'preact/hooks';

/** Client-side navigation on the History API: every page is a real URL the server also answers. */

const listeners = new Set<() => void>();

export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export interface Location {
  readonly path: string;
  readonly params: URLSearchParams;
}

const current = (): Location => ({ path: location.pathname, params: new URLSearchParams(location.search) });

/** The current location; re-renders on navigate() and on back/forward. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return loc;
}

/** Same-origin link clicks become navigate() (modifier clicks and new tabs stay the browser's). */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener('click', (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    const anchor = (event.target as Element | null)?.closest('a');
    if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
    const url = new URL(anchor.href, location.href);
    if (
      url.origin !== location.origin ||
      url.pathname.startsWith('/api/') ||
      url.pathname.startsWith('/media/')
    )
      return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
}
