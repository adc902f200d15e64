import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The connections of an HTTP server, for its close. Node times a request's headers only while its
 * server runs: once `close()` is called it stops, and waits for a connection that has sent no
 * request (or only part of one) until its client lets go, however long; `closeIdleConnections`
 * takes only those between requests. A client that opens a connection and stays silent would hold
 * a service's stop that long.
 */
export class WaitingConnections {
  private readonly sockets = new Set<Socket>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Destroys the connections that have sent nothing yet: no answer of theirs can be lost. */
  dropSilent(): void {
    for (const socket of this.sockets) if (socket.bytesRead === 0) socket.destroy();
  }

  /** Destroys every connection left, whatever it was doing (a grace period's end). */
  dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
