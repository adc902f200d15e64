/**
 * The calls waiting for a stdio MCP server to be restarted (mcp-connection.ts): each waits within
 * its deadline, and is given up once the next restart attempt (as long as the last one took) could
 * no longer bring the server back in time, or when its signal aborts.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** A call waiting for its stdio server to be back: its deadline, and how it goes on. */
interface RestartWait {
  deadline: number;
  resolve(client: Client): void;
  reject(e: Error): void;
}

export class RestartWaits {
  private readonly waits = new Set<RestartWait>();
  /** When the next restart attempt starts, and how long the last failed one took (ms). */
  nextAttemptAt = 0;
  attemptMs = 0;

  /**
   * Waits for the server to be back; fails when `signal` aborts (the call's timeout or
   * cancellation: with its reason if an Error, else `unavailable()`) or just before `deadline`.
   */
  wait(signal: AbortSignal, deadline: number, unavailable: () => Error): Promise<Client> {
    return new Promise<Client>((resolve, reject) => {
      // Given up just before the call's own timeout, so it fails for its true reason (the server
      // is down), not as a tool that did not answer: an attempt under load may take longer than
      // the last one did.
      const giveUp = setTimeout(
        () => wait.reject(unavailable()),
        deadline - Date.now() - Math.min(1000, (deadline - Date.now()) / 10),
      );
      const end = () => {
        clearTimeout(giveUp);
        this.waits.delete(wait);
        signal.removeEventListener('abort', aborted);
      };
      const wait: RestartWait = {
        deadline,
        resolve: (client) => {
          end();
          resolve(client);
        },
        reject: (e) => {
          end();
          reject(e);
        },
      };
      const aborted = () => wait.reject(signal.reason instanceof Error ? signal.reason : unavailable());
      if (signal.aborted) return aborted();
      signal.addEventListener('abort', aborted, { once: true });
      this.waits.add(wait);
    });
  }

  /** The server is back: every waiting call goes on with `client`. */
  resolveAll(client: Client): void {
    for (const wait of this.waits) wait.resolve(client);
  }

  /** Every waiting call fails with `unavailable()`. */
  rejectAll(unavailable: () => Error): void {
    for (const wait of this.waits) wait.reject(unavailable());
  }

  /** An attempt failed: the calls it can no longer serve in time fail with `unavailable()`. */
  rejectHopeless(unavailable: () => Error): void {
    for (const wait of this.waits) if (this.hopeless(wait.deadline)) wait.reject(unavailable());
  }

  /** The next restart attempt (as long as the last one took) would end after `deadline`. */
  hopeless(deadline: number): boolean {
    return this.nextAttemptAt + this.attemptMs >= deadline;
  }
}
