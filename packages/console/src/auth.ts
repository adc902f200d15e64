import { signal } from '@preact/signals';

// docs/guides/console.md: the key is kept for the tab (sessionStorage), never in a URL; the Swagger UI of
// /docs keeps it under the same name, so one prompt serves both.
const STORE = 'agentmesh-api-key';

function stored(): string | undefined {
  try {
    return sessionStorage.getItem(STORE) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The API key of this tab, if one was given. */
export const apiKey = signal<string | undefined>(stored());

/** True once the gateway answered 401: the page shows the key prompt and no data. */
export const keyNeeded = signal(false);

/** True when the gateway refused the key given (the prompt says so). */
export const keyRefused = signal(false);

/** Keeps `key` for the tab and lets the page load its data again. */
export function keepKey(key: string): void {
  try {
    sessionStorage.setItem(STORE, key);
  } catch {
    // storage refused (a private mode): the key lasts as long as the page
  }
  apiKey.value = key;
  keyNeeded.value = false;
  keyRefused.value = false;
}

/** Forgets a key the gateway refused (a 401), and asks for another. */
export function refuseKey(): void {
  // Requests in flight may each answer 401: the first one tells that a key was refused.
  if (apiKey.value !== undefined) keyRefused.value = true;
  dropKey();
}

/** Forgets the tab's key at the user's word, and asks for one. */
export function forgetKey(): void {
  keyRefused.value = false;
  dropKey();
}

function dropKey(): void {
  try {
    sessionStorage.removeItem(STORE);
  } catch {
    // nothing kept
  }
  apiKey.value = undefined;
  keyNeeded.value = true;
}
