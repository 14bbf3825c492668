/** Webhook events (SPEC.md, Events): recorded in the outbox, delivered later. */
import { timeOrderedUuid } from '../time-ordered-uuid.js';

export const EVENT_TYPES = ['scan.created', 'scan.updated', 'risk.created', 'risk.updated'] as const;
/**
 * Sent only by the dashboard's "Send test event" button, to one endpoint. It
 * is not one of SPEC.md's types: clients ignore types they do not know.
 */
const TEST_EVENT_TYPE = 'webhook.test';
export type EventType = (typeof EVENT_TYPES)[number] | typeof TEST_EVENT_TYPE;

export interface OutboxEvent {
  id: string;
  accountId: string;
  type: EventType;
  /** The Scan or Risk object as the API presents it at the moment of the change. */
  data: unknown;
  createdAt: Date;
  /** Only for a test event: the one endpoint it goes to. Every other event goes to every endpoint of its account. */
  endpointId?: string;
}

export function newEvent(accountId: string, type: EventType, data: unknown, at: Date): OutboxEvent {
  return { id: timeOrderedUuid(at), accountId, type, data, createdAt: at };
}

/** A `webhook.test` event for one endpoint: signed, retried and logged like any other. */
export function testEvent(accountId: string, endpointId: string, at: Date): OutboxEvent {
  const data = { endpoint_id: endpointId, message: 'This is a test event sent from the Vigil dashboard; no action is needed.' };
  return { ...newEvent(accountId, TEST_EVENT_TYPE, data, at), endpointId };
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

/**
 * JSON.stringify(eventBody(event)), byte for byte, from the data as the
 * outbox stores it (JSON already): the dispatcher sends each event to every
 * endpoint and on every attempt, and need not parse and serialize the data
 * again each time.
 */
export function serializedEventBody(event: Omit<OutboxEvent, 'data'>, dataJson: string): string {
  const head = JSON.stringify({ id: event.id, event_created_at: event.createdAt.toISOString(), created_at: event.createdAt.getTime(), type: event.type });
  return `${head.slice(0, -1)},"data":${dataJson}}`;
}
