import { A2A_PROTOCOL_VERSION, type AgentCard } from '@a2a-js/sdk';
import type { AgentPlan } from '@agentmesh/shared';

/**
 * The A2A agent card of an agent (docs/guides/a2a-and-remote-agents.md): its name, description and one skill from the
 * agent, a JSON-RPC interface at `{baseUrl}/a2a/{agent}`, streaming, text and JSON in and out,
 * and the bearer scheme when API keys are on.
 */
export function agentCard(agent: AgentPlan, baseUrl: string, auth: boolean): AgentCard {
  const modes = ['text/plain', 'application/json'];
  return {
    name: agent.name,
    description: agent.description || `The agent ${agent.name} of this mesh.`,
    supportedInterfaces: [
      {
        url: `${baseUrl}/a2a/${encodeURIComponent(agent.name)}`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: undefined,
    version: agent.definitionHash.slice(0, 12),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: auth
      ? {
          bearerAuth: {
            scheme: {
              $case: 'httpAuthSecurityScheme',
              value: { description: 'One of the keys of MESH_API_KEYS.', scheme: 'Bearer', bearerFormat: '' },
            },
          },
        }
      : {},
    securityRequirements: auth ? [{ schemes: { bearerAuth: { list: [] } } }] : [],
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [
      {
        id: agent.name,
        name: agent.name,
        description: agent.description || `Invoke ${agent.name}.`,
        tags: [agent.kind],
        examples: [],
        inputModes: modes,
        outputModes: modes,
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
