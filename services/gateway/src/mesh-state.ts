import {
  type AgentPlan,
  type CodeAgentShape,
  effectiveInputSchema,
  effectiveOutputSchema,
  type JsonSchema,
  type MeshConfig,
  type MeshPlan,
  planFromCatalogue,
} from '@agentmesh/shared';
import type { Catalogue } from '@agentmesh/shared/redis';

/** What the gateway knows of the agents: schemas from the config now, callables once tools are known. */
export class MeshState {
  /** Each agent's input and output schema, known from the config alone (routes are built from these). */
  readonly schemas: ReadonlyMap<string, { input: JsonSchema | null; output: JsonSchema | null }>;
  private current: MeshPlan | undefined;
  private version = -1;

  constructor(
    readonly config: MeshConfig,
    private readonly codeAgents: Record<string, CodeAgentShape>,
  ) {
    this.schemas = new Map(
      Object.entries(config.agents).map(([name, a]) => [
        name,
        {
          input: effectiveInputSchema(a, codeAgents[name]),
          output: effectiveOutputSchema(a, codeAgents[name]),
        },
      ]),
    );
  }

  /** The resolved plan, or undefined until the tool-host has published its catalogue. */
  get plan(): MeshPlan | undefined {
    return this.current;
  }

  agent(name: string): AgentPlan | undefined {
    return this.current?.agents[name];
  }

  /** Rebuilds the plan from a (new) catalogue; a config naming tools the catalogue lacks is an error. */
  apply(catalogue: Catalogue): void {
    if (catalogue.version === this.version) return;
    this.current = planFromCatalogue(this.config, catalogue.tools, this.codeAgents);
    this.version = catalogue.version;
  }
}
