import { useState } from 'preact/hooks';
import { keepKey } from '../auth';

/** Asks for an API key (docs/guides/console.md: `[data-role="api-key"]`, Enter submits); nothing else shows. */
export function KeyPrompt({ refused }: { refused: boolean }) {
  const [key, setKey] = useState('');
  return (
    <form
      class="key-prompt"
      onSubmit={(e) => {
        e.preventDefault();
        if (key.trim() !== '') keepKey(key.trim());
      }}
    >
      <h1>API key</h1>
      <p>
        This mesh requires an API key. It is kept for this tab only and sent as{' '}
        <code>Authorization: Bearer</code> with every request.
      </p>
      {refused && <p class="error">The key was refused, or none was given.</p>}
      <label>
        Key{' '}
        <input
          data-role="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          // biome-ignore lint/a11y/noAutofocus: the page has nothing else to do until a key is given
          autoFocus
        />
      </label>
      <button type="submit">Use key</button>
    </form>
  );
}
