import net from 'node:net';

/**
 * A raw TCP connection to a server: what it received, and `closed`, how long after opening the
 * server closed it (in ms).
 */
export function rawConnection(port: number, host = '127.0.0.1') {
  const socket = net.connect(port, host);
  const opened = Date.now();
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, closed, received: () => received };
}
