export { buildPlan, type PlanDeps } from './build-plan.js';
export { canonicalJson } from './canonical-json.js';
export { checkToolName } from './check-tool-name.js';
export { declaredSchema, isTypeBoxType } from './declared-schema.js';
export { DEFAULT_INPUT_SCHEMA, defaultInputSchema } from './default-input-schema.js';
export { definitionHash } from './definition-hash.js';
export {
  type CallableSources,
  type DeclaredCallables,
  deriveCallables,
  type SubagentInfo,
  subagentDescription,
} from './derive-callables.js';
export { deriveInputSchema } from './derive-input-schema.js';
export { deriveSchema, describeType } from './derive-schema.js';
export { definitionOf, describePlanChange } from './describe-plan-change.js';
export { effectiveInputSchema, effectiveOutputSchema } from './effective-schema.js';
export { explicitInputSchema } from './explicit-input-schema.js';
export { explicitSchema, type SchemaRole } from './explicit-schema.js';
export { findCycles } from './find-cycles.js';
export { PlanError, type PlanProblem } from './plan-error.js';
export { planFromCatalogue } from './plan-from-catalogue.js';
export { type CallableTarget, resolveCallableName } from './resolve-callable-name.js';
export { orderSchemaKeys, SCHEMA_KEY_ORDER } from './schema-key-order.js';
export type { AgentPlan, Callable, CodeAgentShape, JsonSchema, MeshPlan, ToolInfo } from './types.js';
export { SUBAGENT_PREFIX } from './types.js';
