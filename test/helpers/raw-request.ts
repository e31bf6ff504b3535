import net from 'node:net';

/** Writes raw bytes to a server and reads its whole answer; resolves once the server closes the connection. */
export function rawRequest(port: number, request: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), json: body ? JSON.parse(body) : undefined });
    });
  });
}
