import { useEffect, useRef } from 'preact/hooks';
import { useLocation } from './router';
import { signOut, useSession } from './session';
import { BrowsePage } from './pages/BrowsePage';
import { BrainPage } from './pages/BrainPage';
import { SignInPage } from './pages/SignInPage';
import { RegisterPage } from './pages/RegisterPage';
import { TokensPage } from './pages/TokensPage';
import { ProfilePage } from './pages/ProfilePage';
import { AddBrainPage } from './pages/AddBrainPage';
import { navigate } from './router';

function Page({ path }: { path: string }) {
  const brain = /^\/brains\/([^/]+)\/?$/.exec(path);
  if (brain) return <BrainPage readableId={decodeURIComponent(brain[1]!)} />;
  switch (path.replace(/\/+$/, '') || '/') {
    case '/':
      return <BrowsePage />;
    case '/signin':
      return <SignInPage />;
    case '/register':
      return <RegisterPage />;
    case '/tokens':
      return <TokensPage />;
    case '/profile':
      return <ProfilePage />;
    case '/add':
      return <AddBrainPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <p>
            Nothing lives at this address. <a href="/">Browse the catalogue</a>.
          </p>
        </>
      );
  }
}

export function App() {
  const { path } = useLocation();
  const { me } = useSession();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // A new page moves the focus to it (screen readers hear the change); the first load keeps it.
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus({ preventScroll: false });
  }, [path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="site">
        <a class="brand" href="/">
          Brain catalogue
        </a>
        <nav aria-label="Account">
          {me ? (
            <>
              <a href="/add">Add brain</a>
              <a href="/profile">{me.username}</a>
              <a href="/tokens">Tokens</a>
              <button
                type="button"
                class="link"
                onClick={() =>
                  void (async () => {
                    await signOut();
                    navigate('/');
                  })()
                }
              >
                Sign out
              </button>
            </>
          ) : (
            <>
              <a href="/signin">Sign in</a>
              <a href="/register">Register</a>
            </>
          )}
        </nav>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page path={path} />
      </main>
    </>
  );
}
