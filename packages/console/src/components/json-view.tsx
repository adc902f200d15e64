import { pretty } from '../format';

/** A value as readable JSON (a string as is), in a scrollable block. */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" title={label}>
      {pretty(value)}
    </pre>
  );
}
