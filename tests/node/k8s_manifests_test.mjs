// The objects `stagegate k8s` prints, checked against the Kubernetes API schema (kubernetes-models'
// validators), read as YAML 1.2 and as YAML 1.1 (what kubectl reads) with the same result, with no
// field the schema does not know, and with the bundle's files byte for byte. No cluster needed.
// Usage: node k8s_manifests_test.mjs /path/to/stagegate   (run by ctest from the source tree)

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, PersistentVolumeClaim } from 'kubernetes-models/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { validate as jobSchema } from 'kubernetes-models/_schemas/IoK8sApiBatchV1Job';
import { validate as configMapSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap';
import { validate as claimSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1PersistentVolumeClaim';

const binary = process.argv[2];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const models = { ConfigMap, PersistentVolumeClaim, Job };
const schemas = { ConfigMap: configMapSchema, PersistentVolumeClaim: claimSchema, Job: jobSchema };
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

let passed = 0;
let failed = 0;
function test(name, body) {
  try {
    body();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}\n${error.stack}`);
  }
}

function parse(text, version) {
  return parseAllDocuments(text, { version }).map((doc) => {
    assert.deepEqual(doc.errors, [], `YAML ${version} errors`);
    return doc.toJS();
  });
}

function k8s(args) {
  const run = spawnSync(binary, ['k8s', 'scenarios/sharded.yaml', '--target-url', 'http://app:8000', ...args], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const objects = parse(run.stdout, '1.2');
  // Every string YAML 1.1 would read as a number, boolean or null is quoted.
  assert.deepEqual(parse(run.stdout, '1.1'), objects);
  return objects;
}

// Fields the schema does not know. A schema's validator reads every property it knows (the
// models copy the whole object first, so it is called directly here): one no validator read is
// one the API server would drop, or refuse with strict field validation.
function unknownFields(object) {
  const read = new Map();
  const watch = (value) => {
    if (value === null || typeof value !== 'object') return value;
    if (!read.has(value)) read.set(value, new Set());
    return new Proxy(value, {
      get(target, key, receiver) {
        read.get(target).add(key);
        return watch(Reflect.get(target, key, receiver));
      },
    });
  };
  const schema = schemas[object.kind];
  assert.ok(schemas[object.kind], `unexpected kind ${object.kind}`);
  assert.ok(schema(watch(object)), JSON.stringify(schema.errors));
  const unknown = [];
  const walk = (value, where) => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      const at = where ? `${where}/${key}` : key;
      if (!Array.isArray(value) && !read.get(value)?.has(key)) unknown.push(at);
      walk(child, at);
    }
  };
  walk(object, '');
  return unknown;
}

function check(object) {
  const Model = models[object.kind];
  assert.ok(Model, `unexpected kind ${object.kind}`);
  const model = new Model(object);
  assert.equal(model.apiVersion, object.apiVersion);
  model.validate();
  assert.deepEqual(unknownFields(object), []);
  assert.match(object.metadata.name, dnsLabel);
  assert.ok(object.metadata.name.length <= 63);
}

const podSpec = (job) => job.spec.template.spec;

test('every object of a default run validates against the Kubernetes schema', () => {
  const objects = k8s(['--shards', '3', '--image', 'registry.example/stagegate:0.1']);
  assert.deepEqual(objects.map((o) => o.kind), ['ConfigMap', 'PersistentVolumeClaim', 'Job', 'Job']);
  objects.forEach(check);
  const shards = objects[2];
  assert.equal(shards.spec.completionMode, 'Indexed');
  assert.equal(shards.spec.completions, 3);
  assert.equal(shards.spec.parallelism, 3);
  assert.equal(shards.spec.backoffLimit, 0);
  assert.match(podSpec(shards).containers[0].command[2], / --shard job\/3 --start-at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /);
});

test('every object validates with the other options', () => {
  const objects = k8s(['--shards', '5', '--image', 'i', '--in-image', '--namespace', 'load',
                       '--name', 'gate', '--cpu', '1.5', '--memory', '512', '--storage-class', 'nfs',
                       '--volume-size', '20Gi']);
  assert.deepEqual(objects.map((o) => o.kind), ['PersistentVolumeClaim', 'Job', 'Job']);
  objects.forEach(check);
  for (const object of objects) assert.equal(object.metadata.namespace, 'load');
  assert.equal(podSpec(objects[1]).containers[0].resources.limits.cpu, '1500m');
});

test('the ConfigMap holds each file of the checkout at the path its item names', () => {
  const [configMap, , shards] = k8s(['--shards', '2', '--image', 'i']);
  const items = podSpec(shards).volumes.find((v) => v.name === 'bundle').configMap.items;
  assert.equal(items.length, Object.keys(configMap.data).length);
  assert.ok(items.some((item) => item.path === 'scenarios/sharded.yaml'));
  for (const { key, path: file } of items) {
    assert.match(key, /^[-._a-zA-Z0-9]+$/);
    assert.equal(configMap.data[key], fs.readFileSync(path.join(root, file), 'utf8'), file);
  }
});

test('the checks catch a broken object', () => {
  const objects = k8s(['--shards', '3', '--image', 'i']);
  const broken = [
    ['completionMode 7', (o) => { o[2].spec.completionMode = 7; }],
    ['completions as a word', (o) => { o[2].spec.completions = 'three'; }],
    ['a command that is not a list', (o) => { podSpec(o[3]).containers[0].command = 'sh'; }],
    ['a secretKeyRef without its key', (o) => { delete podSpec(o[2]).containers[0].env[0].valueFrom.secretKeyRef.key; }],
    ['accessModes as a string', (o) => { o[1].spec.accessModes = 'ReadWriteMany'; }],
    ['a number as a file', (o) => { o[0].data['scenarios.sharded.yaml'] = 7; }],
  ];
  for (const [what, mutate] of broken) {
    const copy = structuredClone(objects);
    mutate(copy);
    assert.throws(() => copy.forEach(check), undefined, what);
  }
  const misspelt = structuredClone(objects);
  misspelt[2].spec.completionsMode = 'Indexed';
  podSpec(misspelt[2]).containers[0].volumeMount = [];
  assert.deepEqual(unknownFields(misspelt[2]).sort(),
                   ['spec/completionsMode', 'spec/template/spec/containers/0/volumeMount']);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
