/**
 * A real Redis server for the tests that need one (Debian's redis-server; .ci/run installs it): on a free port,
 * with nothing written to disk, answered only once it answers INFO with its own process id
 * (redis.io/docs/latest/commands/info).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { freePort } from './app-env.js';

const SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path));

export interface RunningRedis {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  readonly stop: () => void;
}

/** Nothing on disk: no RDB snapshots, no append-only file. */
const EPHEMERAL = ['--save', '', '--appendonly', 'no'];

/**
 * The process id of the Redis server answering on the port (INFO server's `process_id`), once it has loaded and
 * accepts commands; undefined while nothing answers. The id tells our server from another test's on the same port.
 */
function serverPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const done = (pid: number | undefined) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(1000, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (data) => {
      text += data.toString();
      if (text.startsWith('-')) return done(undefined); // LOADING: not ready yet
      const pid = /process_id:(\d+)/.exec(text)?.[1];
      if (pid) done(Number(pid));
    });
  });
}

/** A redis-server with `settings` (its command-line configuration; default: nothing on disk), once it answers. */
export async function startRedis(settings: readonly string[] = EPHEMERAL): Promise<RunningRedis> {
  if (!SERVER) throw new Error('redis-server is not installed (Debian package redis-server; .ci/run installs it)');
  for (let attempt = 0; attempt < 5; attempt++) {
    // A port the system just gave out (another test's server could take it first: then this one exits, and the
    // next attempt takes another).
    const port = await freePort();
    const server: ChildProcess = spawn(
      SERVER,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        tmpdir(),
        '--dbfilename',
        `test-${port}.rdb`,
        ...settings,
      ],
      { stdio: 'ignore' },
    );
    let exited = false;
    server.once('exit', () => (exited = true));
    for (const deadline = Date.now() + 10_000; !exited && Date.now() < deadline; ) {
      if ((await serverPid(port)) === server.pid)
        return { url: `redis://127.0.0.1:${port}`, port, process: server, stop: () => server.kill('SIGKILL') };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server.kill('SIGKILL'); // the port was taken (the server exits), or it never answered: another port
  }
  throw new Error('redis-server did not answer PING on any of five ports');
}
