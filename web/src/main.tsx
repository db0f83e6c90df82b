import { render } from 'preact';
import './styles.css';
import { App } from './App';
import { interceptLinks } from './router';
import { loadSession } from './session';

const root = document.getElementById('app')!;
interceptLinks(root);
render(<App />, root);
void loadSession();
