/** Webhook events (SPEC.md, Events): recorded in the outbox, delivered later. */
import { randomUUID } from 'node:crypto';

export const EVENT_TYPES = ['scan.created', 'scan.updated', 'risk.created', 'risk.updated'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface OutboxEvent {
  id: string;
  accountId: string;
  type: EventType;
  /** The Scan or Risk object as the API presents it at the moment of the change. */
  data: unknown;
  createdAt: Date;
}

export function newEvent(accountId: string, type: EventType, data: unknown, at: Date): OutboxEvent {
  return { id: randomUUID(), accountId, type, data, createdAt: at };
}

/** The Event object of SPEC.md, as delivered: the same id on every endpoint and attempt. */
export function eventBody(event: OutboxEvent) {
  return {
    id: event.id,
    event_created_at: event.createdAt.toISOString(),
    created_at: event.createdAt.getTime(),
    type: event.type,
    data: event.data,
  };
}
