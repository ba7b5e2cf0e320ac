// The image's HEALTHCHECK: exit 0 when GET /healthz on this container's API port answers 200.
const port = process.env.DEVICEBRIDGE_PORT || '7100';
const path = process.argv[2] || '/healthz';
try {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2500) });
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
