/**
 * Test fixture: a TCP link from a device to HQ that a test can break in the two ways a network
 * breaks. `cut()`: every open connection is closed and new ones are refused (HQ stopped, the
 * cable pulled with the OS noticing). `blackhole()`: connections stay open but nothing passes and
 * new ones are accepted and never answered (Wi-Fi gone on the training ground: no FIN, no RST).
 * `restore()` lets traffic through again (connections open across a black hole are closed).
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** A breakable link; give the device `url` instead of HQ's. */
export interface NetLink {
  readonly url: string;
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

/** Start a link to `target` (`http://127.0.0.1:PORT`) on a free local port. */
export async function startNetLink(target: string): Promise<NetLink> {
  const t = new URL(target);
  let mode: 'up' | 'cut' | 'blackhole' = 'up';
  /** Device-side socket → its HQ-side socket, for connections passing traffic. */
  const pairs = new Map<Socket, Socket>();
  /** Device-side sockets held open in silence. */
  const held = new Set<Socket>();
  const hold = (client: Socket): void => {
    held.add(client);
    client.on('close', () => held.delete(client));
  };
  const server: Server = createServer((client) => {
    client.on('error', () => client.destroy());
    if (mode === 'cut') {
      client.destroy();
      return;
    }
    if (mode === 'blackhole') {
      hold(client);
      return;
    }
    const upstream = createConnection({ host: t.hostname, port: Number(t.port) });
    pairs.set(client, upstream);
    const done = (): void => {
      if (!pairs.has(client)) return; // held in a black hole: the device side stays open
      pairs.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => {
      pairs.delete(client);
      upstream.destroy();
    });
    upstream.on('error', done).on('close', done);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  const closeAll = (): void => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    for (const s of held) s.destroy();
    held.clear();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    cut() {
      mode = 'cut';
      closeAll();
    },
    blackhole() {
      mode = 'blackhole';
      // Open connections go silent: the HQ side is dropped, the device side stays open and hears nothing.
      for (const [client, upstream] of pairs) {
        pairs.delete(client);
        client.unpipe(upstream);
        upstream.unpipe(client);
        upstream.destroy();
        hold(client);
      }
    },
    restore() {
      closeAll();
      mode = 'up';
    },
    close: () =>
      new Promise<void>((ok) => {
        closeAll();
        server.close(() => ok());
      }),
  };
}
