import { apiKey, forgetKey, keyNeeded, keyRefused } from '../auth';
import { config, configError } from '../config';
import { route } from '../route';
import { AgentsPage } from './agents-page';
import { InvocationList } from './invocation-list';
import { KeyPrompt } from './key-prompt';
import { TreePage } from './tree-page';

/** The console: a bar of pages, then the page the location hash names, or the key prompt. */
export function App() {
  const r = route.value;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/invocations">
          <img src="/ui/favicon.svg" alt="" width="20" height="20" /> agentmesh
        </a>
        <nav>
          <a href="#/invocations" aria-current={r.page !== 'agents' ? 'page' : undefined}>
            Invocations
          </a>
          <a href="#/agents" aria-current={r.page === 'agents' ? 'page' : undefined}>
            Agents
          </a>
        </nav>
        {apiKey.value && (
          <button type="button" class="quiet" onClick={forgetKey}>
            Forget key
          </button>
        )}
      </header>
      <main>
        {configError.value ? (
          <p class="error">{configError.value}</p>
        ) : !config.value ? null : keyNeeded.value ? (
          <KeyPrompt refused={keyRefused.value} />
        ) : r.page === 'agents' ? (
          <AgentsPage />
        ) : r.page === 'invocation' ? (
          <TreePage key={r.id} id={r.id} />
        ) : (
          <InvocationList />
        )}
      </main>
    </>
  );
}
