/** Prometheus metrics for operations (/metrics). The engine never touches these; the App's I/O layer does. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const metrics = new Registry();
collectDefaultMetrics({ register: metrics });

export const webhooksHandled = new Counter({
  name: 'cuda_gatekeeper_webhooks_total',
  help: 'Webhook deliveries handled, by event',
  labelNames: ['event'] as const,
  registers: [metrics],
});
export const checkRuns = new Counter({
  name: 'cuda_gatekeeper_check_runs_total',
  help: 'Check runs completed, by conclusion',
  labelNames: ['conclusion'] as const,
  registers: [metrics],
});
export const apiCalls = new Counter({
  name: 'cuda_gatekeeper_github_api_calls_total',
  help: 'GitHub API requests made',
  registers: [metrics],
});
export const rateLimitRemaining = new Gauge({
  name: 'cuda_gatekeeper_github_rate_limit_remaining',
  help: 'x-ratelimit-remaining of the latest GitHub response',
  registers: [metrics],
});
export const queueDepth = new Gauge({
  name: 'cuda_gatekeeper_queue_depth',
  help: 'Checks running or waiting (per repository and commit)',
  registers: [metrics],
});
export const latency = new Histogram({
  name: 'cuda_gatekeeper_check_seconds',
  help: 'Webhook-to-completed-check latency',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metrics],
});
