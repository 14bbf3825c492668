/**
 * crds/scan.yaml and src/domain/scans/scan-resource.ts describe the same
 * object: the API server validates with the first, the embedded runtime with
 * the second. These tests walk both and fail when they drift, and check the
 * sample manifests against both.
 */
import { expect } from 'chai';
import { z } from 'zod';
import { crdValidator, loadCrd, refusalMessages, samplesOfKind, structuralProblems, zodDriftProblems, type Schema } from '../support/crd-schema.js';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { SCAN_TYPES } from '../../src/domain/risks/finding.js';
import { SCAN_STATES, TARGETS_PER_SCAN } from '../../src/domain/scans/scan.js';
import {
  assertSpecUnchanged,
  parseScanResource,
  parseScanSpec,
  SCAN_GROUP,
  SCAN_PLURAL,
  SCAN_SPEC_MESSAGES,
  SCAN_VERSION,
  ScanResourceSchema,
  ScanSpecSchema,
  targetLimitGroups,
} from '../../src/domain/scans/scan-resource.js';

const { crd, version, crdSchema } = loadCrd('scan.yaml');
const zodSchema = z.toJSONSchema(ScanResourceSchema, { io: 'output', unrepresentable: 'any' }) as Schema;
const samples = samplesOfKind('Scan');

const zodMessages = (input: unknown): string[] => refusalMessages(ScanSpecSchema, input);

describe('Scan custom resource definition (crds/scan.yaml)', () => {
  it('names the resource as the controller addresses it', () => {
    expect(crd.metadata.name).to.equal(`${SCAN_PLURAL}.${SCAN_GROUP}`);
    expect(crd.spec.group).to.equal(SCAN_GROUP);
    expect(crd.spec.scope).to.equal('Namespaced');
    expect(crd.spec.names).to.include({ kind: 'Scan', plural: SCAN_PLURAL, singular: 'scan' });
    expect(crd.spec.names.shortNames).to.deep.equal(['vscan']);
    expect(crd.spec.versions).to.have.length(1);
    expect(version).to.include({ name: SCAN_VERSION, served: true, storage: true });
    expect(version.subresources).to.deep.equal({ status: {} });
  });

  it('is structural: every node has a type, objects say what they hold, arrays have items', () => {
    const problems = structuralProblems(crdSchema);
    expect(problems).to.deep.equal([]);
    expect(crdSchema.properties.metadata).to.deep.equal({ type: 'object' });
  });

  it('agrees with the zod schema on field names, required fields, types, enums and bounds', () => {
    const problems = zodDriftProblems(crdSchema, zodSchema);
    expect(problems).to.deep.equal([]);
  });

  it('takes its enums from the domain: the 8 scan types and the 7 states', () => {
    expect(crdSchema.properties.spec.properties.type.enum).to.deep.equal([...SCAN_TYPES]);
    expect(crdSchema.properties.status.properties.state.enum).to.deep.equal([...SCAN_STATES]);
  });

  it('status keeps the standard condition shape, keyed by type, and no risk lists or result files', () => {
    const status = crdSchema.properties.status;
    const conditions = status.properties.conditions;
    expect(conditions['x-kubernetes-list-type']).to.equal('map');
    expect(conditions['x-kubernetes-list-map-keys']).to.deep.equal(['type']);
    expect(conditions.items.required).to.have.members(['type', 'status', 'reason', 'message', 'lastTransitionTime']);
    expect(conditions.items.properties.status.enum).to.deep.equal(['True', 'False', 'Unknown']);
    expect(conditions.items.properties.lastTransitionTime.format).to.equal('date-time');
    expect(Object.keys(status.properties)).to.not.include.members(['risks', 'results', 'newOpen', 'reportId']);
  });

  it('carries one CEL rule per spec rule, with the messages the zod schema reports', () => {
    const rules = crdSchema.properties.spec['x-kubernetes-validations'] as Array<{ rule: string; message: string }>;
    const groups = targetLimitGroups();
    expect(groups.map((group) => group.limit)).to.deep.equal([1, 10]);
    const expected = [
      SCAN_SPEC_MESSAGES.oneSelector,
      SCAN_SPEC_MESSAGES.immutable,
      ...groups.map((group) => SCAN_SPEC_MESSAGES.targetLimit(group.limit, group.types)),
      SCAN_SPEC_MESSAGES.authentication,
    ];
    expect(rules.map((rule) => rule.message)).to.have.members(expected);
    expect(rules.find((rule) => rule.message === SCAN_SPEC_MESSAGES.immutable)!.rule).to.equal('self == oldSelf');
    for (const group of groups) {
      const rule = rules.find((candidate) => candidate.message === SCAN_SPEC_MESSAGES.targetLimit(group.limit, group.types))!.rule;
      expect(rule).to.contain(`self.type in [${group.types.map((type) => `'${type}'`).join(', ')}]`);
      expect(rule).to.contain(`size(self.targets) <= ${group.limit}`);
      for (const type of group.types) expect(TARGETS_PER_SCAN[type]).to.equal(group.limit);
    }
    const others = SCAN_TYPES.filter((type) => !groups.some((group) => group.types.includes(type)));
    for (const type of others) expect(TARGETS_PER_SCAN[type]).to.equal(crdSchema.properties.spec.properties.targets.maxItems);
  });

  it('printer columns answer "is it done and what did it find" from fields that exist', () => {
    const columns = version.additionalPrinterColumns as Array<{ name: string; type: string; jsonPath: string }>;
    expect(columns.map((column) => column.name)).to.deep.equal(['Type', 'State', 'Progress', 'New', 'Still Open', 'Closed', 'Age']);
    for (const column of columns) {
      if (column.jsonPath === '.metadata.creationTimestamp') {
        expect(column.type).to.equal('date');
        continue;
      }
      const field = column.jsonPath
        .split('.')
        .slice(1)
        .reduce<Schema | undefined>((schema, key) => schema?.properties?.[key], crdSchema);
      expect(field, `${column.name} -> ${column.jsonPath}`).to.not.equal(undefined);
      expect(field!.type, column.name).to.equal(column.type);
    }
    expect(columns.find((column) => column.name === 'New')!.jsonPath).to.equal('.status.counts.newOpen');
  });
});

describe('Scan sample manifests (config/samples)', () => {
  const validate = crdValidator(crdSchema);

  it('holds the three samples: targets, tags and an authenticated ZAP scan', () => {
    const selectors = samples.map(({ manifest }) => Object.keys(manifest.spec).filter((key) => ['targets', 'targetIds', 'tags'].includes(key)));
    expect(selectors.flat()).to.include.members(['targets', 'tags']);
    const zap = samples.find(({ manifest }) => manifest.spec.type === 'OWASP_ZAP');
    expect(zap?.manifest.spec).to.deep.include({ useAuthentication: true });
    expect(zap?.manifest.spec.targets).to.have.length(1);
    expect(zap?.manifest.spec.targets[0]).to.match(/^https:\/\//);
  });

  for (const { name, manifest } of samples) {
    it(`${name} is valid against the CRD schema and the zod schema`, () => {
      expect(validate(manifest), JSON.stringify(validate.errors)).to.equal(true);
      expect(() => parseScanResource(manifest)).to.not.throw();
      expect(manifest.metadata.namespace).to.equal('vigil-acme');
      expect(manifest.status).to.equal(undefined);
    });
  }

  it('the CRD schema itself refuses an unknown type and an empty target list', () => {
    const base = samples[0]!.manifest;
    expect(validate({ ...base, spec: { ...base.spec, type: 'NIKTO' } })).to.equal(false);
    expect(validate({ ...base, spec: { type: 'NMAP', targets: [] } })).to.equal(false);
  });
});

describe('Scan spec zod schema: the CEL rules for the embedded runtime', () => {
  it('accepts one selector within the type limit', () => {
    expect(ScanSpecSchema.safeParse({ type: 'NMAP', targets: Array.from({ length: 100 }, (_, i) => `host${i}.example.com`) }).success).to.equal(true);
    expect(ScanSpecSchema.safeParse({ type: 'NUCLEI', targets: Array.from({ length: 10 }, (_, i) => `https://s${i}.example.com`) }).success).to.equal(true);
    expect(ScanSpecSchema.safeParse({ type: 'OWASP_ZAP', targets: ['https://shop.example.com/'], useAuthentication: false }).success).to.equal(true);
    expect(ScanSpecSchema.safeParse({ type: 'OPENVAS', targetIds: ['t-1'], scheduledBy: 'sched-1' }).success).to.equal(true);
    expect(ScanSpecSchema.safeParse({ type: 'NMAP_UDP', tags: ['production'] }).success).to.equal(true);
  });

  it('refuses two selectors', () => {
    expect(zodMessages({ type: 'NMAP', targets: ['a.example.com'], tags: ['prod'] })).to.deep.equal([SCAN_SPEC_MESSAGES.oneSelector]);
  });

  it('refuses a spec with no selector', () => {
    expect(zodMessages({ type: 'NMAP' })).to.deep.equal([SCAN_SPEC_MESSAGES.oneSelector]);
  });

  it('refuses an empty selector, saying to list an item or use another selector', () => {
    const messages = zodMessages({ type: 'NMAP', targets: [], tags: ['prod'] });
    expect(messages.join(' ')).to.match(/spec\.targets must list at least one item/);
  });

  it('refuses 2 targets for OWASP_ZAP, saying to create one Scan per URL', () => {
    const messages = zodMessages({ type: 'OWASP_ZAP', targets: ['https://a.example.com', 'https://b.example.com'] });
    expect(messages).to.deep.equal([SCAN_SPEC_MESSAGES.targetLimit(1, ['OWASP_ZAP', 'OWASP_ZAP_ACTIVE'])]);
    expect(messages[0]).to.contain('create one Scan per URL');
  });

  it('refuses 11 targets for NUCLEI, saying to split them', () => {
    const messages = zodMessages({ type: 'NUCLEI', targets: Array.from({ length: 11 }, (_, i) => `s${i}.example.com`) });
    expect(messages).to.deep.equal([SCAN_SPEC_MESSAGES.targetLimit(10, ['NUCLEI', 'SSLYZE'])]);
    expect(messages[0]).to.contain('split spec.targets into Scans of 10 or fewer');
  });

  it('refuses an unknown type, listing the valid ones', () => {
    const messages = zodMessages({ type: 'NIKTO', targets: ['a.example.com'] });
    expect(messages).to.deep.equal([SCAN_SPEC_MESSAGES.unknownType]);
    for (const type of SCAN_TYPES) expect(messages[0]).to.contain(type);
  });

  it('refuses useAuthentication: true on a type that cannot log in', () => {
    expect(zodMessages({ type: 'NMAP', targets: ['a.example.com'], useAuthentication: true })).to.deep.equal([SCAN_SPEC_MESSAGES.authentication]);
    expect(ScanSpecSchema.safeParse({ type: 'NMAP', targets: ['a.example.com'], useAuthentication: false }).success).to.equal(true);
  });

  it('refuses more than 100 items and over-long items', () => {
    expect(zodMessages({ type: 'NMAP', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }).join(' ')).to.match(/at most 100 items/);
    expect(zodMessages({ type: 'NMAP', targets: [`${'a'.repeat(2049)}`] }).join(' ')).to.match(/at most 2048 characters/);
  });

  it('drops null fields before validating, as the API server prunes them', () => {
    expect(ScanSpecSchema.parse({ type: 'NMAP', targets: null, tags: ['prod'] })).to.deep.equal({ type: 'NMAP', tags: ['prod'] });
  });

  it('parseScanSpec throws one InvalidRequestError naming the field', () => {
    expect(() => parseScanSpec({ type: 'OWASP_ZAP', targets: ['https://a.example.com', 'https://b.example.com'] }))
      .to.throw(InvalidRequestError)
      .with.property('message')
      .that.matches(/^spec\.targets: OWASP_ZAP and OWASP_ZAP_ACTIVE scan one target per Scan/);
    expect(() => parseScanSpec({ type: 'NMAP' })).to.throw(InvalidRequestError, `spec: ${SCAN_SPEC_MESSAGES.oneSelector}`);
  });

  it('assertSpecUnchanged refuses any change to the spec (self == oldSelf)', () => {
    const spec = parseScanSpec({ type: 'NMAP', targets: ['a.example.com'] });
    expect(() => assertSpecUnchanged(spec, { ...spec })).to.not.throw();
    expect(() => assertSpecUnchanged(spec, { ...spec, targets: ['b.example.com'] })).to.throw(InvalidRequestError, SCAN_SPEC_MESSAGES.immutable);
  });

  it('the resource schema refuses duplicate condition types, as listType map does', () => {
    const condition = { type: 'Ready', status: 'True', reason: 'Admitted', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const resource = {
      apiVersion: 'vigil.dev/v1alpha1',
      kind: 'Scan',
      metadata: { name: 'a', namespace: 'vigil-acme' },
      spec: { type: 'NMAP', targets: ['a.example.com'] },
      status: { state: 'QUEUED', conditions: [condition] },
    };
    expect(() => parseScanResource(resource)).to.not.throw();
    expect(() => parseScanResource({ ...resource, status: { conditions: [condition, condition] } })).to.throw(InvalidRequestError, /once/);
    expect(() => parseScanResource({ ...resource, status: { progress: 101 } })).to.throw(InvalidRequestError, /status\.progress/);
  });
});
