/**
 * `npm start`: run the App's HTTP server. Configuration comes from the environment (APP_ID, PRIVATE_KEY or
 * PRIVATE_KEY_PATH, WEBHOOK_SECRET, PORT, LOG_LEVEL, GHE_HOST/GHE_PROTOCOL for GitHub Enterprise or a test
 * server); Probot never logs the key or the secret.
 */
import { run } from 'probot';
import app from './app.js';
import { GatekeeperOctokit } from './github/octokit.js';

await run(app, { Octokit: GatekeeperOctokit });
