/**
 * The deployment files (issue 12), checked offline and fast:
 * - every Kubernetes manifest in infra/k8s parses and validates against the Kubernetes schemas
 *   (kubernetes-models' per-kind classes, `.validate()`), and a broken one is caught;
 * - the kustomize base lists only files that exist and renders with `kubectl kustomize` (when a
 *   kubectl is on PATH: it bundles kustomize and needs no cluster), every rendered object valid;
 * - the wiring the bridge relies on: probes on /healthz and /readyz, a termination grace period
 *   that covers the drain, anti-affinity, selectors that match, settings the bridge knows;
 * - infra/compose.yaml: three bridges with their own node name and URL, the files it mounts exist.
 * The images and the compose stack themselves run in test/container/run.sh (test/e2e/container-stack.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { inRange, loadConfig } from '../../src/config.ts';

const root = new URL('../..', import.meta.url).pathname;
const k8sDir = path.join(root, 'infra/k8s');

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [k: string]: any;
};
const models: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

function validate(obj: Obj): void {
  const Model = models[`${obj.apiVersion}/${obj.kind}`];
  if (Model === undefined) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
}

function docsOf(text: string, file: string): Obj[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return doc.toJS() as Obj;
  });
}

const manifestFiles = readdirSync(k8sDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const manifests = manifestFiles.flatMap((f) =>
  docsOf(readFileSync(path.join(k8sDir, f), 'utf8'), f).map((obj) => ({ file: f, obj })),
);
const find = (kind: string, name: string): Obj => {
  const hit = manifests.find(({ obj }) => obj.kind === kind && obj.metadata.name === name);
  if (hit === undefined) throw new Error(`no ${kind} ${name} in infra/k8s`);
  return hit.obj;
};
const configVariables = new Set(
  readFileSync(path.join(root, 'src/config.ts'), 'utf8').match(/\b[A-Z][A-Z0-9_]{2,}\b/g),
);

describe('infra/k8s manifests', () => {
  it('every manifest validates against the Kubernetes schemas', () => {
    expect(manifestFiles.sort()).toEqual([
      'configmap.yaml',
      'deployment.yaml',
      'pdb.yaml',
      'redis.yaml',
      'secret.template.yaml',
      'service.yaml',
    ]);
    for (const { file, obj } of manifests) expect(() => validate(obj), `${file}: ${obj.kind}`).not.toThrow();
  });

  it('a broken manifest is caught (the validation can fail)', () => {
    const deployment = structuredClone(find('Deployment', 'devicebridge'));
    deployment.spec.replicas = 'three';
    expect(() => validate(deployment)).toThrow();
    const probe = structuredClone(find('Deployment', 'devicebridge'));
    probe.spec.template.spec.containers[0].readinessProbe.httpGet.port = { name: 'http' };
    expect(() => validate(probe)).toThrow();
    expect(() =>
      validate({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x' }, spec: { ports: 80 } }),
    ).toThrow();
  });

  it('wires probes, the drain grace, anti-affinity and matching selectors', () => {
    const deployment = find('Deployment', 'devicebridge');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.startupProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    const config = find('ConfigMap', 'devicebridge-config');
    const drainMs = Number(config.data.DEVICEBRIDGE_DRAIN_GRACE_MS);
    const preStopS = Number(container.lifecycle.preStop.exec.command[1]);
    // The bridge exits by drain grace + 15 s of cleanup; the kubelet must not SIGKILL it before.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopS * 1000 + drainMs + 15_000);
    expect(pod.affinity.podAntiAffinity).toBeDefined();
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    expect(find('Service', 'devicebridge').spec.selector).toEqual(labels);
    expect(find('PodDisruptionBudget', 'devicebridge').spec.selector.matchLabels).toEqual(labels);
    expect(pod.securityContext.runAsUser).toBe(10001);
    // Every setting is one the bridge reads (src/config.ts), the secret's keys included.
    const env = [...container.env.map((e: { name: string }) => e.name), ...Object.keys(config.data)].filter(
      (n) => /^[A-Z]/.test(n) && !n.startsWith('POD_'),
    );
    for (const name of env) {
      expect(configVariables.has(name) || name.startsWith('AWS_'), `${name} is not a bridge setting`).toBe(
        true,
      );
    }
    const secretKeys = Object.keys(find('Secret', 'devicebridge-secrets').stringData);
    for (const ref of container.env.filter(
      (e: { valueFrom?: { secretKeyRef?: { key: string } } }) => e.valueFrom?.secretKeyRef,
    )) {
      expect(secretKeys).toContain(ref.valueFrom.secretKeyRef.key);
    }
    expect(JSON.parse(config.data['devices.json'])).toBeInstanceOf(Array);
  });

  it('believes X-Forwarded-For from the proxies in front only (a valid range list the bridge accepts)', () => {
    const config = find('ConfigMap', 'devicebridge-config');
    const value = config.data.DEVICEBRIDGE_TRUSTED_PROXIES;
    expect(value, 'DEVICEBRIDGE_TRUSTED_PROXIES in the ConfigMap').toBeTypeOf('string');
    const ranges = loadConfig({ DEVICEBRIDGE_TRUSTED_PROXIES: value }).trustedProxies;
    expect(ranges.length).toBeGreaterThan(0);
    // Never everyone: a client could then name any address it likes.
    for (const range of ranges) expect(range.prefix, range.text).toBeGreaterThan(0);
  });

  it('the kustomize base lists existing files and renders valid objects', () => {
    const kustomization = parseYaml(readFileSync(path.join(k8sDir, 'kustomization.yaml'), 'utf8'));
    expect(kustomization.kind).toBe('Kustomization');
    for (const r of kustomization.resources) expect(existsSync(path.join(k8sDir, r)), r).toBe(true);
    expect(kustomization.resources).not.toContain('secret.template.yaml');
    let rendered: string;
    try {
      rendered = execFileSync('kubectl', ['kustomize', k8sDir], { encoding: 'utf8', timeout: 30_000 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        // No kubectl on this machine: the resource list above is all that can be checked.
        process.stderr.write('infra-manifests: kubectl not found; kustomize render skipped\n');
        return;
      }
      throw err;
    }
    const objects = docsOf(rendered, 'kubectl kustomize');
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/devicebridge-config',
      'Deployment/devicebridge',
      'PodDisruptionBudget/devicebridge',
      'Service/devicebridge',
      'Service/redis',
      'StatefulSet/redis',
    ]);
    for (const obj of objects) expect(() => validate(obj), obj.kind).not.toThrow();
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    expect(deployment.spec.template.spec.containers[0].image).toBe('registry.example.com/devicebridge:0.1.0');
    expect(deployment.metadata.labels?.['app.kubernetes.io/part-of']).toBe('devicebridge');
  });
});

describe('infra/compose.yaml', () => {
  const compose = parseYaml(readFileSync(path.join(root, 'infra/compose.yaml'), 'utf8'), { merge: true });
  /** A value as compose runs it with no variables set: `${NAME:-default}` is its default. */
  const interpolated = (value: string) => value.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

  it('runs three bridges, each with its own node name and URL, behind the balancer', () => {
    const bridges = ['bridge1', 'bridge2', 'bridge3'].map((name) => compose.services[name]);
    for (const [i, bridge] of bridges.entries()) {
      const env = bridge.environment;
      expect(env.DEVICEBRIDGE_NODE).toBe(`bridge${i + 1}`);
      expect(env.DEVICEBRIDGE_NODE_URL).toBe(`http://bridge${i + 1}:7100`);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.DEVICEBRIDGE_TOKENS_FILE).toBe('/run/secrets/devicebridge-tokens');
      expect(env.S3_ENDPOINT).toBe('http://s3:9000');
      expect(bridge.secrets).toEqual(['devicebridge-tokens']);
      for (const name of Object.keys(env)) {
        expect(configVariables.has(name) || name.startsWith('AWS_'), name).toBe(true);
      }
    }
    const haproxy = readFileSync(path.join(root, 'infra/haproxy.cfg'), 'utf8');
    for (const i of [1, 2, 3]) expect(haproxy).toContain(`server bridge${i} bridge${i}:7100`);
    expect(haproxy).toContain('option httpchk GET /readyz');
    // Only the balancer is published, and only on loopback.
    const published = Object.entries(compose.services).filter(([, s]) => (s as { ports?: unknown }).ports);
    expect(published.map(([n]) => n)).toEqual(['lb']);
    expect(compose.services.lb.ports[0]).toMatch(/^127\.0\.0\.1:/);
  });

  it('the balancer appends X-Forwarded-For; the bridges believe only peers of the private stack network', () => {
    const haproxy = readFileSync(path.join(root, 'infra/haproxy.cfg'), 'utf8');
    expect(haproxy).toMatch(/^\s*option forwardfor\s*$/m);
    const privateRanges = loadConfig({
      DEVICEBRIDGE_TRUSTED_PROXIES: '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16',
    }).trustedProxies;
    for (const name of ['bridge1', 'bridge2', 'bridge3']) {
      const trusted = interpolated(compose.services[name].environment.DEVICEBRIDGE_TRUSTED_PROXIES);
      const ranges = loadConfig({ DEVICEBRIDGE_TRUSTED_PROXIES: trusted }).trustedProxies;
      expect(ranges.length, name).toBeGreaterThan(0);
      // Every trusted range lies inside the private ranges: no public address names its own client.
      for (const range of ranges) {
        const first = range.bytes;
        expect(
          privateRanges.some((p) => inRange(first, p) && range.prefix >= p.prefix),
          `${name}: ${range.text}`,
        ).toBe(true);
      }
      // The bridges sit on the stack's one network, published only through the balancer.
      expect(compose.services[name].networks, name).toBeUndefined();
      expect(compose.services[name].ports, name).toBeUndefined();
    }
  });

  it('mounts files that exist and a devices file the simulator serves', () => {
    for (const volume of compose.services.bridge1.volumes) {
      const source = volume.split(':')[0];
      if (source.startsWith('.')) expect(existsSync(path.join(root, 'infra', source)), source).toBe(true);
    }
    const devices = JSON.parse(readFileSync(path.join(root, 'infra/devices.json'), 'utf8'));
    expect(devices).toHaveLength(Number(compose.services.simulator.environment.SIM_COUNT));
    expect(devices.map((d: { endpoint: string }) => d.endpoint)).toEqual(
      devices.map((_: unknown, i: number) => `simulator:${6555 + i}`),
    );
    expect(
      existsSync(
        path.join(root, compose.services.bridge1.build.context.replace('..', '.'), 'infra/Containerfile'),
      ),
    ).toBe(true);
  });
});
