/**
 * A loopback TCP proxy to a real server that a test can take down and bring back on the same port: a
 * way to cut a shared service (the machine's Redis) off from one process without stopping it for others.
 */
import type { Socket, TCPSocketListener } from "bun";

export interface TcpProxy {
  port: number;
  /** closes the listener and every proxied connection: the service looks down */
  down(): void;
  /** listens again on the same port */
  up(): void;
  close(): void;
}

interface Link {
  peer?: Socket<Link>;
  pending: Uint8Array[];
}

export function startTcpProxy(target: { hostname: string; port: number }, port = 0): TcpProxy {
  const open = new Set<Socket<Link>>();
  let listener: TCPSocketListener<Link> | undefined;
  const listen = (on: number) =>
    Bun.listen<Link>({
      hostname: "127.0.0.1",
      port: on,
      socket: {
        open(client) {
          client.data = { pending: [] };
          open.add(client);
          void Bun.connect<Link>({
            ...target,
            socket: {
              open(upstream) {
                upstream.data = { peer: client, pending: [] };
                client.data.peer = upstream;
                open.add(upstream);
                for (const chunk of client.data.pending) upstream.write(chunk);
              },
              data(upstream, chunk) {
                upstream.data.peer?.write(chunk);
              },
              close(upstream) {
                open.delete(upstream);
                upstream.data.peer?.end();
              },
              error(upstream) {
                upstream.data.peer?.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (client.data.peer) client.data.peer.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          open.delete(client);
          client.data.peer?.end();
        },
        error(client) {
          client.data.peer?.end();
        },
      },
    });
  listener = listen(port);
  const boundPort = listener.port;
  return {
    port: boundPort,
    down() {
      listener?.stop(true);
      listener = undefined;
      for (const socket of open) socket.terminate();
      open.clear();
    },
    up() {
      listener ??= listen(boundPort);
    },
    close() {
      this.down();
    },
  };
}
