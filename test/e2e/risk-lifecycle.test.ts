/**
 * The risk lifecycle end to end in the embedded runtime: the real service,
 * real nmap, and a TCP listener on loopback (VIGIL_ALLOW_TARGETS=127.0.0.0/8)
 * that is up, up, down and up again across four scans of 127.0.0.1. Other
 * services on this machine may have loopback ports open too, so only the
 * listener's port risk is asserted on, never totals.
 */
import { expect } from 'chai';
import { TestService } from '../support/test-service.js';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { waitFor } from '../support/wait.js';
import { receiveEvents } from '../support/event-receiver.js';

const LAB = { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' };

interface ScanJson {
  id: string;
  state: string;
  conditions: unknown[];
  requested_targets: Array<{ target_id: string; target: string }>;
  risks: { new_open: Array<{ risk_id: string }>; still_open: Array<{ risk_id: string }>; closed: Array<{ risk_id: string }> };
}

interface RiskJson {
  id: string;
  target_id: string;
  status: string;
  first_detected_at: string;
  last_detected_at: string;
  risk_definition: { scan_type: string; title: string; additional_info: { port?: number; protocol?: string } };
}

describe('risk lifecycle end to end with real nmap: a listener up, up, down, up', function () {
  this.timeout(600_000);
  let service: TestService;
  let listener: TcpListener | undefined;

  before(async () => {
    service = await TestService.start({ env: LAB });
    // Events are stored only for their receivers.
    receiveEvents(service.vigil.webhookEndpoints, service.accountId);
  });
  after(async () => {
    await listener?.close();
    await service.stop();
  });

  async function scanLoopback(): Promise<ScanJson> {
    const started = await service.post('/v1/scans', { type: 'NMAP', targets: ['127.0.0.1'] });
    expect(started.status, started.text).to.equal(200);
    const id = started.body.data.id as string;
    const done = await waitFor(
      async () => (await service.get(`/v1/scans/${id}`)).body.data as ScanJson,
      (scan) => ['SUCCEEDED', 'FAILED', 'STOPPED'].includes(scan.state),
      `scan ${id} to finish`,
      180_000,
    );
    expect(done.state, JSON.stringify(done.conditions)).to.equal('SUCCEEDED');
    return done;
  }

  /** The NMAP risk of the listener's port on the target, from the list (closed ones included). */
  async function portRisk(targetId: string, port: number): Promise<RiskJson | undefined> {
    const filters = JSON.stringify({ target_id: [targetId], 'risk_definition.scan_type': ['NMAP'] });
    const response = await service.get('/v1/risks', { query: { filters } });
    expect(response.status, response.text).to.equal(200);
    const matching = (response.body.data as RiskJson[]).filter(
      (risk) => risk.risk_definition.additional_info.port === port && risk.risk_definition.title.startsWith(`Open port ${port}/tcp`),
    );
    expect(matching.length, `at most one risk for port ${port}`).to.be.at.most(1);
    return matching[0];
  }

  async function getRisk(id: string): Promise<RiskJson> {
    const response = await service.get(`/v1/risks/${id}`);
    expect(response.status, response.text).to.equal(200);
    return response.body.data;
  }

  const listed = (list: Array<{ risk_id: string }>, id: string) => list.some((entry) => entry.risk_id === id);

  function statusesInEvents(riskId: string): string[] {
    return (
      service.vigil.db
        .prepare(
          "SELECT type, json_extract(payload, '$.status') AS status FROM events WHERE type LIKE 'risk.%' AND json_extract(payload, '$.id') = ? ORDER BY seq",
        )
        .all(riskId) as Array<{ type: string; status: string }>
    ).map((row) => `${row.type}:${row.status}`);
  }

  it('opens the port risk (new_open), keeps it (still_open), closes it (closed) and re-opens it (still_open)', async () => {
    listener = await tcpListener();
    const port = listener.port;

    // Scan 1, listener up: first detection.
    const first = await scanLoopback();
    const targetId = first.requested_targets[0]!.target_id;
    const risk = await portRisk(targetId, port);
    expect(risk, `a risk for the listener on port ${port}`).to.not.equal(undefined);
    const riskId = risk!.id;
    expect(listed(first.risks.new_open, riskId), 'new_open of scan 1').to.equal(true);
    expect(listed(first.risks.still_open, riskId) || listed(first.risks.closed, riskId)).to.equal(false);
    const afterFirst = await getRisk(riskId);
    expect(afterFirst).to.include({ status: 'OPEN', target_id: targetId });
    expect(afterFirst.risk_definition).to.include({ scan_type: 'NMAP' });
    expect(afterFirst.risk_definition.additional_info).to.include({ port, protocol: 'tcp' });
    expect(afterFirst.first_detected_at).to.equal(afterFirst.last_detected_at);

    // Scan 2, listener still up: detected again.
    const second = await scanLoopback();
    expect(listed(second.risks.still_open, riskId), 'still_open of scan 2').to.equal(true);
    expect(listed(second.risks.new_open, riskId) || listed(second.risks.closed, riskId)).to.equal(false);
    const afterSecond = await getRisk(riskId);
    expect(afterSecond.status).to.equal('OPEN');
    expect(afterSecond.first_detected_at).to.equal(afterFirst.first_detected_at);
    expect(Date.parse(afterSecond.last_detected_at)).to.be.greaterThan(Date.parse(afterFirst.last_detected_at));

    // Scan 3, listener closed: not detected, so closed.
    await listener.close();
    listener = undefined;
    const third = await scanLoopback();
    expect(listed(third.risks.closed, riskId), 'closed of scan 3').to.equal(true);
    expect(listed(third.risks.new_open, riskId) || listed(third.risks.still_open, riskId)).to.equal(false);
    const afterThird = await getRisk(riskId);
    expect(afterThird.status).to.equal('CLOSED');
    expect(afterThird.last_detected_at).to.equal(afterSecond.last_detected_at);

    // Scan 4, the listener back on the same port: the same risk re-opens, listed in still_open.
    listener = await tcpListener({ port });
    const fourth = await scanLoopback();
    expect(listed(fourth.risks.still_open, riskId), 'still_open of scan 4').to.equal(true);
    expect(listed(fourth.risks.new_open, riskId) || listed(fourth.risks.closed, riskId)).to.equal(false);
    const afterFourth = await getRisk(riskId);
    expect(afterFourth.status).to.equal('OPEN');
    expect(afterFourth.first_detected_at).to.equal(afterFirst.first_detected_at);
    expect(Date.parse(afterFourth.last_detected_at)).to.be.greaterThan(Date.parse(afterThird.last_detected_at));
    expect((await portRisk(targetId, port))!.id, 'still one risk for the port').to.equal(riskId);

    expect(statusesInEvents(riskId)).to.deep.equal(['risk.created:OPEN', 'risk.updated:OPEN', 'risk.updated:CLOSED', 'risk.updated:OPEN']);
  });
});
