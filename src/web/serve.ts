/**
 * `npm run serve`: the self-service page alone, without the GitHub App (PORT, default 3000; HOST, default 127.0.0.1).
 */
import { createServer } from 'node:http';
import { webHandler } from './handler.js';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

const server = createServer((req, res) => {
  webHandler(req, res)
    .then((handled) => {
      if (handled) return;
      res.writeHead(302, { location: '/cuda-gatekeeper/' });
      res.end();
    })
    .catch((error: Error) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error: ${error.message}\n`);
    });
});
server.listen(port, host, () =>
  process.stdout.write(`cuda-gatekeeper self-service page on http://${host}:${port}/cuda-gatekeeper/\n`),
);
