import { render } from 'preact';
import { App } from './components/app';
import { loadConfig } from './config';
import './styles.css';

void loadConfig();
render(<App />, document.getElementById('app')!);
