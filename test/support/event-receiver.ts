/**
 * Events are stored only for their receivers (README, Webhooks): an event no
 * webhook endpoint of its account would receive is not recorded at all. A
 * test that reads the outbox registers an endpoint first, as a user who
 * wants events does. Its host never resolves here, so a running dispatcher's
 * deliveries to it fail and are retried; the tests read the outbox itself.
 */
export const TEST_RECEIVER_URL = 'https://hooks.example.com/vigil';

export function receiveEvents(endpoints: { add(accountId: string, url: string): unknown }, accountId: string): void {
  endpoints.add(accountId, TEST_RECEIVER_URL);
}
