import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carried it, with the resource it came from. */
export interface CollectedSpan {
  service: string;
  pid: number | undefined;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** A tiny OTLP/HTTP collector for `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: it keeps every span it is sent. */
export interface OtlpCollector {
  /** The base URL for `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`). */
  url: string;
  spans: CollectedSpan[];
  /** Every request as it came: `/v1/traces` for spans (another path means another signal was exported). */
  requests: { path: string; contentType: string; body: Buffer }[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

const plainValue = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));

const attributesOf = (kvs: KeyValue[] = []) =>
  Object.fromEntries(kvs.map((kv) => [kv.key, plainValue(kv.value)]));

/** Starts the collector on a free loopback port. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const requests: OtlpCollector['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type']);
      requests.push({ path: req.url ?? '', contentType, body: raw });
      if (req.url === '/v1/traces' && contentType.startsWith('application/json')) {
        const body = JSON.parse(raw.toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: {
              spans?: {
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                kind: number;
                attributes?: KeyValue[];
              }[];
            }[];
          }[];
        };
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service: String(resource['service.name']),
                pid: resource['process.pid'] as number | undefined,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
