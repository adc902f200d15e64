/** The `OTEL_*` variables that decide whether traces are exported (read from the env passed in). */
export type TracingEnv = Record<string, string | undefined>;

const TRUE = new Set(['true', '1', 'yes', 'on']);

/**
 * True when an exporter is configured: `OTEL_TRACES_EXPORTER` names one (anything but `none`), or
 * it is unset and an OTLP endpoint is given. `OTEL_SDK_DISABLED=true` turns tracing off whatever
 * else is set. The SDK's own default (OTLP to localhost:4318) would export from every service
 * nobody configured, so without an explicit exporter tracing stays off and costs nothing.
 */
export function tracingEnabled(env: TracingEnv): boolean {
  if (TRUE.has((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase())) return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '' && s !== 'null');
  if (exporters.length > 0) return !(exporters.length === 1 && exporters[0] === 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}
