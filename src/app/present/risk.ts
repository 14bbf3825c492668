import type { RiskView } from '../../domain/risks/risk.js';

/** The API shape of a Risk (SPEC.md field names); also the `data` of risk events. */
export function presentRisk(risk: RiskView) {
  return {
    id: risk.id,
    target_id: risk.targetId,
    target: risk.target,
    target_label: risk.targetLabel,
    tags: risk.tags,
    status: risk.status,
    first_detected_at: risk.firstDetectedAt,
    last_detected_at: risk.lastDetectedAt,
    is_accepted: risk.isAccepted,
    accepted_by: risk.acceptedBy,
    risk_definition: risk.definition,
  };
}
