/**
 * Scheduled scans end to end in the embedded runtime: the real service with
 * its ScheduledScan controller, real nmap against a listener on loopback, and
 * the run's e-mail received by a real SMTP server. The README's walkthrough.
 */
import { expect } from 'chai';
import { TestService } from '../support/test-service.js';
import { tcpListener, type TcpListener } from '../support/listeners.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { waitFor } from '../support/wait.js';

describe('scheduled scans, end to end with real nmap and a real SMTP server', function () {
  this.timeout(120_000);
  let service: TestService;
  let sink: SmtpSink;
  let listener: TcpListener;

  beforeEach(async () => {
    sink = await startSmtpSink();
    listener = await tcpListener();
    service = await TestService.start({
      env: {
        VIGIL_ALLOW_TARGETS: '127.0.0.0/8',
        VIGIL_SMTP_URL: sink.url,
        VIGIL_SMTP_FROM: 'scans@vigil.example.com',
        VIGIL_PUBLIC_URL: 'https://vigil.example.com',
      },
    });
  });
  afterEach(async () => {
    await service.stop();
    await listener.close();
    await sink.close();
  });

  /** A tagged loopback Target and a ONCE schedule of it without start_time (it runs now); returns the schedule's id. */
  async function scheduleLabCheckNow(): Promise<string> {
    const target = await service.post('/v1/targets', { target: '127.0.0.1', tags: ['lab'] });
    expect(target.status, target.text).to.equal(200);
    const created = await service.post('/v1/scans/scheduled', {
      name: 'Lab check',
      schedule: 'ONCE',
      scan_types: ['NMAP'],
      filter_set: { tags: ['lab'] },
      email_notification: 'ALWAYS',
      email_to: ['sec@example.com'],
    });
    expect(created.status, created.text).to.equal(200);
    return created.body.data.id as string;
  }

  it('a ONCE schedule without start_time runs now: an NMAP Scan with scheduled_by, then one e-mail with the open port', async () => {
    const id = await scheduleLabCheckNow();

    const scan = await waitFor(
      async () =>
        ((await service.get('/v1/scans')).body.data as Array<{ id: string; scheduled_by?: string; state: string }>).find((s) => s.scheduled_by === id),
      (found) => found !== undefined && ['SUCCEEDED', 'FAILED'].includes(found.state),
      'the scheduled NMAP scan to finish',
    );
    expect(scan!.state).to.equal('SUCCEEDED');

    const scheduled = (await service.get(`/v1/scans/scheduled/${id}`)).body.data;
    expect(scheduled.last_ran).to.be.a('string');
    expect(scheduled.next_run ?? null).to.equal(null);

    await waitFor(
      async () => sink.received.length,
      (count) => count > 0,
      'the run e-mail',
    );
    const [mail] = sink.received;
    expect(mail!.envelopeFrom).to.equal('scans@vigil.example.com');
    expect(mail!.envelopeTo).to.deep.equal(['sec@example.com']);
    expect(mail!.parsed.subject).to.match(/^\[Vigil\] Lab check: [1-9]\d* new risks?, 0 closed$/);
    expect(mail!.parsed.text).to.include(`Open port ${listener.port}/tcp`);
    expect(mail!.parsed.html).to.include(`Open port ${listener.port}/tcp`);
    expect(mail!.parsed.text).to.include('https://vigil.example.com/dashboard/risks');

    // One run, recorded as notified, so no later pass mails it again.
    const runs = service.vigil.db.prepare('SELECT notification, scan_ids FROM scheduled_runs WHERE scheduled_scan_id = ?').all(id);
    expect(runs).to.deep.equal([{ notification: 'SENT', scan_ids: JSON.stringify([scan!.id]) }]);
  });

  it('without VIGIL_SMTP_URL the e-mail is written to the log instead', async () => {
    await service.stop();
    service = await TestService.start({ env: { VIGIL_ALLOW_TARGETS: '127.0.0.0/8' } });
    await scheduleLabCheckNow();
    const line = await waitFor(
      async () =>
        service.logLines
          .map((text) => JSON.parse(text) as { msg: string; email?: { to: string[]; text: string } })
          .find((entry) => entry.msg === 'e-mail not sent: VIGIL_SMTP_URL is unset'),
      (found) => found !== undefined,
      'the logged e-mail',
    );
    const email = line!.email!;
    expect(email.to).to.deep.equal(['sec@example.com']);
    expect(email.text).to.include(`Open port ${listener.port}/tcp`);
  });
});
