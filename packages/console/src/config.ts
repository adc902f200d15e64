import { signal } from '@preact/signals';
import { apiKey, keyNeeded } from './auth';

/**
 * What the gateway says of itself at `/ui/config.json` (open, like the page): keys required or
 * not, and whether it re-runs from a call (docs/guides/durability.md).
 */
export const config = signal<{ auth: boolean; fork?: boolean } | undefined>(undefined);
export const configError = signal<string | undefined>(undefined);

/** Reads the console's config once; with keys required and none kept, the page asks first. */
export async function loadConfig(): Promise<void> {
  try {
    const res = await fetch('/ui/config.json', { cache: 'no-store' });
    const c = (await res.json()) as { auth: boolean; fork?: boolean };
    if (c.auth && !apiKey.value) keyNeeded.value = true;
    config.value = c;
  } catch (e) {
    configError.value = `The gateway did not answer: ${(e as Error).message}`;
  }
}
