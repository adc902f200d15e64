// The gateway's embeddable parts: tests start it in-process on port 0.
export { buildGateway, type Gateway, type GatewayOptions } from './app.js';
