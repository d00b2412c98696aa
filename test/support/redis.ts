/**
 * A real Redis server for the tests that need one (Debian's redis-server; .ci/run installs it): on a free port,
 * with nothing written to disk, answered only once it answers PING (redis.io/docs/latest/commands/ping).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';

const SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path));

export interface RunningRedis {
  readonly url: string;
  readonly stop: () => void;
}

/** True once a PING on the port is answered +PONG (the server has loaded and accepts commands). */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export async function startRedis(): Promise<RunningRedis> {
  if (!SERVER) throw new Error('redis-server is not installed (Debian package redis-server; .ci/run installs it)');
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const server: ChildProcess = spawn(
      SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    let exited = false;
    server.once('exit', () => (exited = true));
    for (const deadline = Date.now() + 10_000; !exited && Date.now() < deadline; ) {
      if (await pong(port)) return { url: `redis://127.0.0.1:${port}`, stop: () => server.kill('SIGKILL') };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server.kill('SIGKILL'); // the port was taken (the server exits), or it never answered: another port
  }
  throw new Error('redis-server did not answer PING on any of five ports');
}
