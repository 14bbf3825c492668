/**
 * Accounts and their API keys: creation (CLI and bootstrap), authentication
 * of every request, and key management for the dashboard.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import {
  DEFAULT_MIN_OPENVAS_QOD,
  assertValidAccountName,
  assertValidNamespace,
  defaultNamespaceFor,
  type Account,
  type Feature,
  type Plan,
} from '../domain/accounts/account.js';
import { apiKeyMatches, digestApiKey, generateApiKey } from '../domain/accounts/api-key.js';
import { InvalidRequestError, UnauthenticatedError } from '../domain/errors.js';
import type { AccountRepository } from './ports.js';

export interface NewAccount {
  name: string;
  plan?: Plan;
  features?: Feature[];
  monthlyScanLimit?: number | null;
  minOpenvasQod?: number;
  namespace?: string;
}

export const MAX_API_KEY_NAME_LENGTH = 100;

export interface Principal {
  account: Account;
  apiKeyId: string;
}

export class AccountsService {
  constructor(
    private readonly accounts: AccountRepository,
    private readonly clock: Clock,
  ) {}

  /** Creates an account and its first API key; the key is returned once and only its hash is stored. */
  createAccount(input: NewAccount, apiKey: string = generateApiKey()): { account: Account; apiKey: string } {
    assertValidAccountName(input.name);
    const namespace = input.namespace ?? defaultNamespaceFor(input.name);
    assertValidNamespace(namespace);
    const account: Account = {
      id: randomUUID(),
      name: input.name,
      plan: input.plan ?? 'free',
      features: [...new Set(input.features ?? [])],
      monthlyScanLimit: input.monthlyScanLimit ?? null,
      minOpenvasQod: input.minOpenvasQod ?? DEFAULT_MIN_OPENVAS_QOD,
      namespace,
      createdAt: this.clock.now().toISOString(),
    };
    this.accounts.transaction(() => {
      if (this.accounts.findByName(account.name)) throw new InvalidRequestError(`an account named '${account.name}' already exists`);
      if (this.accounts.findByNamespace(namespace)) throw new InvalidRequestError(`namespace '${namespace}' is already bound to another account`);
      this.accounts.insert(account);
      this.storeKey(account.id, apiKey, 'initial key');
    });
    return { account, apiKey };
  }

  /** Every account, for operators (`vigil accounts list`). */
  listAccounts(): Account[] {
    return this.accounts.list();
  }

  /**
   * The account an operator names by id or by name (`--account`). Ids are
   * UUIDs and names are free text, so an id is tried first: a name that
   * looks like another account's id cannot shadow it.
   */
  findAccount(idOrName: string): Account {
    const account = this.accounts.findById(idOrName) ?? this.accounts.findByName(idOrName);
    if (account === undefined) throw new InvalidRequestError(`no account has the id or name '${idOrName}'; 'vigil accounts list' shows them`);
    return account;
  }

  /** Adds a key to an account; returns its id and the key, shown once. */
  createApiKey(accountId: string, name: string): { id: string; apiKey: string } {
    const trimmed = name.trim();
    if (trimmed === '' || trimmed.length > MAX_API_KEY_NAME_LENGTH) {
      throw new InvalidRequestError(`A key needs a name of 1 to ${MAX_API_KEY_NAME_LENGTH} characters that says where it is used.`);
    }
    const apiKey = generateApiKey();
    return { id: this.storeKey(accountId, apiKey, trimmed), apiKey };
  }

  revokeApiKey(accountId: string, keyId: string): boolean {
    return this.accounts.revokeApiKey(accountId, keyId, this.clock.now().toISOString());
  }

  listApiKeys(accountId: string) {
    return this.accounts.listApiKeys(accountId);
  }

  private storeKey(accountId: string, apiKey: string, name: string): string {
    const { lookup, hash } = digestApiKey(apiKey);
    const id = randomUUID();
    this.accounts.insertApiKey({ id, accountId, name, lookup, hash, createdAt: this.clock.now().toISOString() });
    return id;
  }

  /** Resolves the account of an API key; throws UnauthenticatedError for a missing, unknown or revoked key. */
  authenticate(presented: string | undefined): Principal {
    if (presented === undefined || presented === '') throw new UnauthenticatedError();
    const digest = digestApiKey(presented);
    for (const { key, account } of this.accounts.findActiveKeysByLookup(digest.lookup)) {
      if (apiKeyMatches(digest, key.hash)) return { account, apiKeyId: key.id };
    }
    throw new UnauthenticatedError('The API key in X-SERVICE-API-KEY is not valid.');
  }

  /**
   * CONTRACT.md: with VIGIL_BOOTSTRAP_API_KEY, an account named `default`
   * exists and accepts that key; without it, the first start creates one and
   * returns its new key so that the caller can print it once.
   */
  bootstrap(bootstrapKey: string | undefined, namespace: string): { createdKey?: string } {
    return this.accounts.transaction(() => {
      const existing = this.accounts.findByName('default');
      if (bootstrapKey !== undefined) {
        const owner = this.ownerOf(bootstrapKey);
        if (owner !== undefined && owner !== existing?.id) {
          throw new InvalidRequestError('VIGIL_BOOTSTRAP_API_KEY is already a key of another account; choose a different value');
        }
        if (existing === undefined) {
          this.createAccount({ name: 'default', namespace }, bootstrapKey);
        } else if (owner === undefined) {
          this.storeKey(existing.id, bootstrapKey, 'bootstrap key');
        }
        return {};
      }
      if (this.accounts.count() > 0) return {};
      return { createdKey: this.createAccount({ name: 'default', namespace }).apiKey };
    });
  }

  private ownerOf(apiKey: string): string | undefined {
    const digest = digestApiKey(apiKey);
    return this.accounts.findActiveKeysByLookup(digest.lookup).find(({ key }) => apiKeyMatches(digest, key.hash))?.account.id;
  }
}
