/**
 * The Scan custom resource (crds/scan.yaml) as TypeScript types and zod
 * schemas. The Kubernetes API server validates a Scan with the CRD's
 * openAPIV3Schema and CEL rules; the embedded runtime validates it with these
 * schemas, so both refuse the same objects with the same messages.
 * test/unit/scan-crd.test.ts walks both schemas and fails when they drift.
 */
import { parseResource } from '../resources/parse.js';
import { z } from 'zod';
import { SCAN_TYPES, type ScanType } from '../risks/finding.js';
import { InvalidRequestError } from '../errors.js';
import { SCAN_STATES, TARGETS_PER_SCAN, WEB_SCAN_TYPES, type Condition, type ResolvedTarget, type SkippedTarget } from './scan.js';

export const SCAN_GROUP = 'vigil.dev';
export const SCAN_VERSION = 'v1alpha1';
export const SCAN_PLURAL = 'scans';
export const SCAN_KIND = 'Scan';
export const SCAN_API_VERSION = `${SCAN_GROUP}/${SCAN_VERSION}`;

/** Bounds shared with the CRD; CEL cost estimation needs every list and string bounded. */
const SCAN_SPEC_LIMITS = {
  maxSelectorItems: 100,
  maxTargetLength: 2048,
  maxTargetIdLength: 255,
  maxTagLength: 255,
  maxScheduledByLength: 255,
} as const;

const WEB_TYPES = SCAN_TYPES.filter((type) => WEB_SCAN_TYPES.has(type));

function typeList(types: readonly ScanType[]): string {
  return types.length === 2 ? `${types[0]} and ${types[1]}` : types.join(', ');
}

/** Scan types grouped by a per-Scan target limit below the list maximum (the CRD has one CEL rule per group). */
export function targetLimitGroups(): Array<{ limit: number; types: ScanType[] }> {
  const groups = new Map<number, ScanType[]>();
  for (const type of SCAN_TYPES) {
    const limit = TARGETS_PER_SCAN[type];
    if (limit < SCAN_SPEC_LIMITS.maxSelectorItems) groups.set(limit, [...(groups.get(limit) ?? []), type]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([limit, types]) => ({ limit, types }));
}

function targetLimitMessage(limit: number, types: readonly ScanType[]): string {
  return limit === 1
    ? `${typeList(types)} scan one target per Scan: list a single URL in spec.targets and create one Scan per URL`
    : `${typeList(types)} scan at most ${limit} targets per Scan: split spec.targets into Scans of ${limit} or fewer`;
}

/**
 * The messages of the CRD's x-kubernetes-validations rules, word for word;
 * the zod schema reports the same sentences.
 */
export const SCAN_SPEC_MESSAGES = {
  oneSelector: 'set exactly one of spec.targets, spec.targetIds or spec.tags',
  immutable: 'spec is immutable: delete this Scan and create a new one to scan with other settings',
  authentication: `useAuthentication applies only to ${typeList(WEB_TYPES)}: remove it or set it to false`,
  targetLimit: targetLimitMessage,
  unknownType: `spec.type must be one of ${SCAN_TYPES.join(', ')}`,
} as const;

const bounded = (max: number, what: string) => z.string().min(1, `${what} must not be empty`).max(max, `${what} must be at most ${max} characters`);

const selector = (item: z.ZodString, field: string) =>
  z
    .array(item)
    .min(1, `spec.${field} must list at least one item; or leave it out and use another selector`)
    .max(SCAN_SPEC_LIMITS.maxSelectorItems, `spec.${field} may list at most ${SCAN_SPEC_LIMITS.maxSelectorItems} items: split the request into several Scans`);

/**
 * The API server prunes null fields of a structural schema before validating
 * (a YAML `tags:` with no value); the embedded runtime does the same.
 */
function dropNullFields(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null));
}

/** The longest a finished Scan's resource may be kept (ten years): a bound, and below the timers' 2^31 ms once split into requeues. */
export const MAX_TTL_SECONDS = 315_360_000;

const ScanSpecFields = z.object({
  type: z.enum(SCAN_TYPES, { error: SCAN_SPEC_MESSAGES.unknownType }),
  targets: selector(bounded(SCAN_SPEC_LIMITS.maxTargetLength, 'each spec.targets item'), 'targets').optional(),
  targetIds: selector(bounded(SCAN_SPEC_LIMITS.maxTargetIdLength, 'each spec.targetIds item'), 'targetIds').optional(),
  tags: selector(bounded(SCAN_SPEC_LIMITS.maxTagLength, 'each spec.tags item'), 'tags').optional(),
  useAuthentication: z.boolean().optional(),
  scheduledBy: z.string().max(SCAN_SPEC_LIMITS.maxScheduledByLength).optional(),
  ttlSecondsAfterFinished: z
    .int('spec.ttlSecondsAfterFinished must be a whole number of seconds')
    .min(0, 'spec.ttlSecondsAfterFinished must be 0 or more')
    .max(MAX_TTL_SECONDS, `spec.ttlSecondsAfterFinished must be at most ${MAX_TTL_SECONDS} (ten years)`)
    .optional(),
});

export const ScanSpecSchema = z.preprocess(
  dropNullFields,
  ScanSpecFields.superRefine((spec, ctx) => {
    const selectors = [spec.targets, spec.targetIds, spec.tags].filter((list) => list !== undefined);
    if (selectors.length !== 1) ctx.addIssue({ code: 'custom', message: SCAN_SPEC_MESSAGES.oneSelector, path: [] });
    const limit = TARGETS_PER_SCAN[spec.type];
    if (spec.targets !== undefined && spec.targets.length > limit && limit < SCAN_SPEC_LIMITS.maxSelectorItems) {
      const group = targetLimitGroups().find((candidate) => candidate.limit === limit)!;
      ctx.addIssue({ code: 'custom', message: SCAN_SPEC_MESSAGES.targetLimit(limit, group.types), path: ['targets'] });
    }
    if (spec.useAuthentication === true && !WEB_SCAN_TYPES.has(spec.type)) {
      ctx.addIssue({ code: 'custom', message: SCAN_SPEC_MESSAGES.authentication, path: ['useAuthentication'] });
    }
  }),
);

/** metav1.Condition, as controller-gen writes it into CRDs. */
const CONDITION_TYPE_PATTERN = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

const DateTimeString = z.iso.datetime({ offset: true });
const Count = z.int().min(0);

export const ConditionSchema = z.object({
  type: z.string().max(316).regex(CONDITION_TYPE_PATTERN),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().min(1).max(1024).regex(CONDITION_REASON_PATTERN),
  message: z.string().max(32768),
  lastTransitionTime: DateTimeString,
  observedGeneration: Count.optional(),
});

const ResolvedTargetSchema = z.object({
  targetId: z.string(),
  target: z.string().max(SCAN_SPEC_LIMITS.maxTargetLength),
  addresses: z.array(z.string()),
});

const SkippedTargetSchema = z.object({
  targetId: z.string(),
  skippedReason: z.string(),
});

/** Small by design (DESIGN.md decision 2): counts, not risk lists; no result files. */
const ScanStatusSchema = z.object({
  scanId: z.string().optional(),
  state: z.enum(SCAN_STATES).optional(),
  progress: z.int().min(0).max(100).optional(),
  isAuthenticated: z.boolean().optional(),
  resolvedTargets: z.array(ResolvedTargetSchema).max(SCAN_SPEC_LIMITS.maxSelectorItems).optional(),
  skippedTargets: z.array(SkippedTargetSchema).max(SCAN_SPEC_LIMITS.maxSelectorItems).optional(),
  counts: z.object({ newOpen: Count, stillOpen: Count, closed: Count }).optional(),
  conditions: z
    .array(ConditionSchema)
    .refine(
      (conditions) => new Set(conditions.map((condition) => condition.type)).size === conditions.length,
      'each condition type may appear once (listType map keyed by type)',
    )
    .optional(),
  startedAt: DateTimeString.optional(),
  finishedAt: DateTimeString.optional(),
  observedGeneration: Count.optional(),
});

/** The API server checks object names as DNS subdomains (RFC 1123); so does the embedded runtime. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const OwnerReferenceSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

export const ScanMetadataSchema = z.object({
  name: z.string().max(253).regex(DNS_SUBDOMAIN, 'metadata.name must be a lowercase DNS subdomain such as nightly-nmap'),
  namespace: z.string().max(63).regex(DNS_LABEL, 'metadata.namespace must be a lowercase DNS label such as vigil-acme'),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  ownerReferences: z.array(OwnerReferenceSchema).optional(),
  creationTimestamp: DateTimeString.optional(),
});

export const ScanResourceSchema = z.object({
  apiVersion: z.literal(SCAN_API_VERSION),
  kind: z.literal(SCAN_KIND),
  metadata: ScanMetadataSchema,
  spec: ScanSpecSchema,
  status: ScanStatusSchema.optional(),
});

export type ScanSpec = z.infer<typeof ScanSpecSchema>;
export type ScanStatus = z.infer<typeof ScanStatusSchema>;
export type ScanResource = z.infer<typeof ScanResourceSchema>;

/** Compile-time guard: the CR's status parts are the domain's shapes (src/domain/scans/scan.ts). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const statusShapesMatchDomain: [
  Same<z.infer<typeof ConditionSchema>, Condition>,
  Same<z.infer<typeof ResolvedTargetSchema>, ResolvedTarget>,
  Same<z.infer<typeof SkippedTargetSchema>, SkippedTarget>,
] = [true, true, true];
void statusShapesMatchDomain;

/** Validates a spec as the API server would at creation; throws InvalidRequestError saying what to change. */
export function parseScanSpec(input: unknown): ScanSpec {
  return parseResource(ScanSpecSchema, input, 'spec');
}

/** Validates a whole Scan object (for example one read back from the embedded store or a manifest). */
export function parseScanResource(input: unknown): ScanResource {
  return parseResource(ScanResourceSchema, input, '');
}

/** The CRD's immutability rule (`self == oldSelf` on spec), for the embedded runtime's updates. */
export function assertSpecUnchanged(previous: ScanSpec, next: ScanSpec): void {
  if (JSON.stringify(canonical(previous)) !== JSON.stringify(canonical(next))) {
    throw new InvalidRequestError(SCAN_SPEC_MESSAGES.immutable);
  }
}

function canonical(spec: ScanSpec): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(spec)
      .filter(([, value]) => value !== undefined)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}
