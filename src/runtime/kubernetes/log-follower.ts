/**
 * One followed container log per scanner pod (`GET .../pods/{pod}/log?follow=true`),
 * on Node's http(s).request with one Agent for every stream. client-node's
 * Log made each request through node-fetch with an Agent, a copy of the TLS
 * options and an AbortController of its own, kept for the stream's life:
 * with 1,000 scans running, that was about half of what their log streams
 * held in the controller's heap (bench/operator.ts). Headers (the bearer
 * token, refreshed by client-node's authenticators) are taken from the
 * KubeConfig for every request; the Agent, built by the KubeConfig for the
 * cluster's TLS settings and proxy, from the first.
 */
import http from 'node:http';
import https from 'node:https';
import type { Writable } from 'node:stream';
import type * as k8s from './client-node.js';

export interface FollowedLog {
  /** Ends the stream (the sink is not ended). */
  abort(): void;
}

export class LogFollower {
  private agent: http.Agent | undefined;

  constructor(private readonly kubeConfig: k8s.KubeConfig) {}

  /** Resolves once the API server answered 200 and the log flows into `sink`; rejects with the HTTP status as `code` otherwise. */
  async follow(namespace: string, pod: string, container: string, sink: Writable, options: { tailLines?: number } = {}): Promise<FollowedLog> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('No currently active cluster');
    const request: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(request);
    this.agent ??= request.agent as http.Agent;
    const url = new URL(`${cluster.server.replace(/\/+$/, '')}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`);
    url.searchParams.set('container', container);
    url.searchParams.set('follow', 'true');
    if (options.tailLines !== undefined) url.searchParams.set('tailLines', String(options.tailLines));
    const send = url.protocol === 'https:' ? https.request : http.request;
    const outgoing = send(url, {
      method: 'GET',
      agent: this.agent,
      headers: request.headers ?? {},
      ...(request.auth === undefined ? {} : { auth: request.auth }),
    });
    return new Promise((resolve, reject) => {
      // Errors after the answer (a reset connection, an abort) end the stream; they are not the caller's.
      outgoing.on('error', reject);
      outgoing.once('response', (response) => {
        response.on('error', () => undefined);
        if (response.statusCode !== 200) {
          response.resume();
          reject(
            Object.assign(new Error(`following the log of ${namespace}/${pod} (${container}): HTTP ${response.statusCode}`), { code: response.statusCode }),
          );
          return;
        }
        response.pipe(sink);
        // Once the stream closed, the handle keeps nothing of it (the observer keeps handles until the pod is deleted).
        let live: http.ClientRequest | undefined = outgoing;
        outgoing.once('close', () => (live = undefined));
        resolve({ abort: () => live?.destroy() });
      });
      outgoing.end();
    });
  }
}
