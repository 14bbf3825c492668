/**
 * API keys: 256 bits of randomness, shown once, stored only as a SHA-256
 * hash. A slow password hash buys nothing for keys this long, and SHA-256
 * keeps authentication cheap on every request. A key is found by a short
 * lookup prefix of its hash and then compared in constant time, so response
 * timing tells an attacker nothing about stored keys.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const API_KEY_PREFIX = 'vgl_';

export interface ApiKeyDigest {
  /** First 16 hex characters of the hash: an index, not a secret. */
  lookup: string;
  hash: Buffer;
}

export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function digestApiKey(key: string): ApiKeyDigest {
  const hash = createHash('sha256').update(key, 'utf8').digest();
  return { lookup: hash.subarray(0, 8).toString('hex'), hash };
}

export function apiKeyMatches(presented: ApiKeyDigest, storedHash: Uint8Array): boolean {
  return storedHash.length === presented.hash.length && timingSafeEqual(presented.hash, storedHash);
}
