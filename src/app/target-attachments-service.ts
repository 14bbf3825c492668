/**
 * Files attached to a Target (SPEC.md, Authenticated scanning and Upload an
 * API definition): a Selenium IDE login recording and an API definition.
 * Each is checked whole before anything is stored; a refused file changes
 * nothing. Uploading again replaces the file of that kind.
 */
import type { Account } from '../domain/accounts/account.js';
import type { Clock } from '../domain/clock.js';
import { NotFoundError } from '../domain/errors.js';
import { attachmentFileName, parseLoginRecording } from '../domain/targets/login-recording.js';
import type { Target } from '../domain/targets/target.js';
import { checkApiDefinition } from './api-definition-check.js';
import type { TargetRepository } from './ports.js';

export class TargetAttachmentsService {
  constructor(
    private readonly targets: TargetRepository,
    private readonly clock: Clock,
  ) {}

  /** Checks that the target is the caller's before the body is read, so another account's id is a 404 whatever the file. */
  assertOwned(account: Account, targetId: string): void {
    if (this.targets.findById(account.id, targetId) === undefined) throw new NotFoundError('target', targetId);
  }

  attachLoginRecording(account: Account, targetId: string, rawFileName: string | undefined, content: Buffer): Target {
    this.assertOwned(account, targetId);
    const fileName = attachmentFileName(rawFileName);
    parseLoginRecording(fileName, content);
    return this.store(account, targetId, { kind: 'selenium', fileName, content });
  }

  async attachApiDefinition(account: Account, targetId: string, rawFileName: string | undefined, content: Buffer): Promise<Target> {
    this.assertOwned(account, targetId);
    const fileName = attachmentFileName(rawFileName);
    await checkApiDefinition(fileName, content);
    return this.store(account, targetId, { kind: 'openapi', fileName, content });
  }

  private store(account: Account, targetId: string, file: { kind: 'selenium' | 'openapi'; fileName: string; content: Buffer }): Target {
    // Deleted while the file was checked: the same 404 as before.
    if (!this.targets.attach(account.id, targetId, { ...file, updatedAt: this.clock.now().toISOString() })) throw new NotFoundError('target', targetId);
    return this.targets.findById(account.id, targetId)!;
  }
}
